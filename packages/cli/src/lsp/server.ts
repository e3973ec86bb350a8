import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { egressPolicyFromEnv } from '@maitento/egress/static';
import {
  type Agent,
  type CompiledRepo,
  type Diagnostic,
  describeProperty,
  describeShape,
  editorContext,
  fileShape,
  formatMtr,
  refKindAt,
  type Shape,
  shapeAt,
} from '@maitento/lang';
import {
  type CancellationToken,
  CompletionItemKind,
  type CompletionItem,
  type Connection,
  createConnection,
  DiagnosticSeverity,
  DidChangeWatchedFilesNotification,
  FileChangeType,
  InsertTextFormat,
  type Diagnostic as LspDiagnostic,
  LSPErrorCodes,
  type Location,
  MarkupKind,
  type Position,
  ProposedFeatures,
  type RequestMessage,
  type Range,
  ResponseError,
  TextDocumentSyncKind,
  TextDocuments,
  type TextEdit,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { type Place, type Repo, WorkspaceIndex } from './workspace.js';

/** How long after the last change diagnostics are computed and pushed. */
export const DIAGNOSTICS_DELAY_MS = 150;

/** The `source` of every diagnostic the server pushes. */
export const DIAGNOSTIC_SOURCE = 'maitento';

/** A compiler diagnostic as LSP sends it: lines and columns 0-based, in UTF-16 code units as the compiler counts. */
export function toLspDiagnostic(d: Diagnostic): LspDiagnostic {
  const start = { line: d.line - 1, character: d.column - 1 };
  const end =
    d.endLine !== undefined && d.endColumn !== undefined
      ? { line: d.endLine - 1, character: d.endColumn - 1 }
      : { line: start.line, character: start.character };
  return {
    range: { start, end },
    severity: d.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: d.code,
    source: DIAGNOSTIC_SOURCE,
    message: d.hint ? `${d.message}\nhint: ${d.hint}` : d.message,
  };
}

function pathOf(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

const cancelled = () => new ResponseError(LSPErrorCodes.RequestCancelled, 'the request was cancelled');

/**
 * Runs a request handler after the messages already received (a `$/cancelRequest` for it among them) were read:
 * a cancelled request answers `RequestCancelled` (-32800), and a handler that throws answers an error, never
 * stopping the server.
 */
function guarded<P, R>(
  handler: (params: P) => Promise<R> | R,
): (params: P, token: CancellationToken) => Promise<R | ResponseError> {
  return async (params, token) => {
    await new Promise((resolve) => setImmediate(resolve));
    if (token.isCancellationRequested) return cancelled();
    try {
      const result = await handler(params);
      // Read what arrived while the handler ran (the event loop polls I/O before the next setImmediate): a cancel
      // sent during a long request is honoured rather than answered with a result the client dropped.
      await new Promise((resolve) => setImmediate(resolve));
      return token.isCancellationRequested ? cancelled() : result;
    } catch (error) {
      return new ResponseError(-32603, error instanceof Error ? error.message : String(error));
    }
  };
}

function resourceDescription(compiled: CompiledRepo | undefined, kind: string, name: string): string | undefined {
  if (!compiled) return undefined;
  switch (kind) {
    case 'schedule': {
      const schedule = compiled.schedules.find((s) => s.name === name);
      return schedule && `Starts ${schedule.interaction} at "${schedule.cron}" (${schedule.timezone})`;
    }
    case 'auth-provider': {
      const provider = compiled.authProviders.find((p) => p.name === name);
      return provider && `OAuth 2 provider ${provider.issuer ?? provider.authorizationUrl ?? ''}`.trim();
    }
    case 'connector':
      return compiled.connectors.find((c) => c.name === name)?.description;
    case 'tool':
      return compiled.tools.find((t) => t.name === name)?.guidance;
    case 'agent': {
      const agent: Agent | undefined = compiled.agents.find((a) => a.name === name);
      return agent?.summary ?? agent?.instructions;
    }
    case 'interaction':
      return compiled.interactions.find((i) => i.name === name)?.task;
    default:
      return undefined;
  }
}

/** Serves the language server protocol for `.mtr` files on the given connection (stdio for `mt lsp`). */
export function startServer(connection: Connection): void {
  const documents = new TextDocuments(TextDocument);
  let index = new WorkspaceIndex([]);
  /** What was last pushed per URI (as JSON), so unchanged files are not pushed again. */
  const published = new Map<string, string>();
  /** The URI each open document was opened with (clients spell URIs their own way). */
  const uris = new Map<string, string>();
  const timers = new Map<string, NodeJS.Timeout>();
  let watchRegistration = false;
  let ready: Promise<void> = Promise.resolve();

  /** File URIs made from paths, kept: a check of a big repo asks for many. */
  const madeUris = new Map<string, string>();
  const uriOf = (path: string) => {
    const uri = uris.get(path) ?? madeUris.get(path);
    if (uri !== undefined) return uri;
    const made = pathToFileURL(path).href;
    madeUris.set(path, made);
    return made;
  };

  function push(path: string, diagnostics: LspDiagnostic[], force: boolean): void {
    const uri = uriOf(path);
    const json = JSON.stringify(diagnostics);
    if (!force && published.get(uri) === json) return;
    if (!force && diagnostics.length === 0 && !published.has(uri)) return;
    published.set(uri, json);
    void connection.sendDiagnostics({ uri, diagnostics });
  }

  /** Per repo root: the absolute paths its last check pushed diagnostics for. */
  const shown = new Map<string, Set<string>>();

  /**
   * Checks a repo (again: the compiler redoes what the changes affect) and pushes what changed: the files with
   * diagnostics, those that had some (now fixed or deleted), and open documents not pushed yet (an empty list).
   */
  function checkRepo(repo: Repo): void {
    const compiled = index.compile(repo);
    const byFile = new Map<string, LspDiagnostic[]>();
    for (const d of compiled.diagnostics) {
      const path = join(repo.root, ...d.file.split('/'));
      const list = byFile.get(path) ?? [];
      list.push(toLspDiagnostic(d));
      byFile.set(path, list);
    }
    for (const [path, list] of byFile) push(path, list, index.open.has(path) && !published.has(uriOf(path)));
    for (const path of shown.get(repo.root) ?? []) if (!byFile.has(path)) push(path, [], false);
    for (const path of index.open.keys()) {
      if (byFile.has(path) || published.has(uriOf(path)) || index.rootOf(path) !== repo.root) continue;
      push(path, [], true);
    }
    shown.set(repo.root, new Set(byFile.keys()));
    // An `@json` naming a file the index has not read (outside the resource folders): read it, then check again.
    void index.readNamedJson(repo).then(
      (found) => found && scheduleRepo(repo),
      (error) => connection.console.error(`maitento: reading @json files failed: ${String(error)}`),
    );
  }

  function checkPlace(path: string, place: Place): void {
    if (place.repo) checkRepo(place.repo);
    else push(path, index.checkLoose(path).map(toLspDiagnostic), index.open.has(path) && !published.has(uriOf(path)));
  }

  /** Runs `check` 150 ms after the last call for `key` (a repo root, or a file of no repo). */
  function debounce(key: string, check: () => Promise<void> | void, what: string): void {
    clearTimeout(timers.get(key));
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        ready
          .then(check)
          .catch((error) => connection.console.error(`maitento: checking ${what} failed: ${String(error)}`));
      }, DIAGNOSTICS_DELAY_MS),
    );
  }

  /** Checks the repo of `path` (or the file alone) 150 ms after the last call for it. */
  function schedule(path: string): void {
    debounce(index.rootOf(path) ?? path, async () => checkPlace(path, await index.place(path)), path);
  }

  /** Checks a repo 150 ms after the last call for it. */
  function scheduleRepo(repo: Repo): void {
    debounce(repo.root, () => checkRepo(repo), repo.root);
  }

  connection.onInitialize((params) => {
    const folders = (params.workspaceFolders ?? []).map((f) => pathOf(f.uri)).filter((p) => p !== undefined);
    if (folders.length === 0 && params.rootUri) {
      const root = pathOf(params.rootUri);
      if (root) folders.push(root);
    }
    index = new WorkspaceIndex(folders, {
      egress: egressPolicyFromEnv(process.env),
      platformOrigin: process.env.MT_PUBLIC_URL?.trim() || undefined,
    });
    ready = index.index().catch((error) => connection.console.error(`maitento: indexing failed: ${String(error)}`));
    watchRegistration = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        completionProvider: { triggerCharacters: ['"', '(', '@'], resolveProvider: false },
        hoverProvider: true,
        definitionProvider: true,
        documentFormattingProvider: true,
      },
      serverInfo: { name: 'maitento', version: '0.1.0' },
    };
  });

  connection.onInitialized(() => {
    if (watchRegistration) {
      void connection.client.register(DidChangeWatchedFilesNotification.type, {
        // The `.json` files: those `@json` names are part of the files that name them.
        watchers: [{ globPattern: '**/*.mtr' }, { globPattern: '**/*.json' }],
      });
    }
    // A failure is logged and never leaves `ready` rejected: every request awaits it.
    ready = ready
      .then(() => {
        for (const repo of index.repos.values()) checkRepo(repo);
      })
      .catch((error) => connection.console.error(`maitento: the first check failed: ${String(error)}`));
  });

  connection.onDidChangeWatchedFiles(async (params) => {
    await ready;
    for (const change of params.changes) {
      const path = pathOf(change.uri);
      if (path?.endsWith('.json')) {
        // A `.json` file a repo read or names: the repo is checked again (the files loading it are re-checked).
        try {
          for (const repo of await index.jsonChanged(path)) scheduleRepo(repo);
        } catch (error) {
          connection.console.error(`maitento: reading ${path} failed: ${String(error)}`);
        }
        continue;
      }
      if (!path?.endsWith('.mtr') || index.open.has(path)) continue;
      try {
        await index.fileChanged(path, change.type === FileChangeType.Deleted);
      } catch (error) {
        connection.console.error(`maitento: reading ${path} failed: ${String(error)}`);
      }
      if (change.type === FileChangeType.Deleted && !index.rootOf(path)) push(path, [], false);
      schedule(path);
    }
  });

  documents.onDidOpen(({ document }) => {
    const path = pathOf(document.uri);
    if (!path) return;
    uris.set(path, document.uri);
    index.open.set(path, document.getText());
    schedule(path);
  });
  documents.onDidChangeContent(({ document }) => {
    const path = pathOf(document.uri);
    if (!path) return;
    index.open.set(path, document.getText());
    schedule(path);
  });
  documents.onDidClose(({ document }) => {
    const path = pathOf(document.uri);
    if (!path) return;
    index.open.delete(path);
    uris.delete(path);
    schedule(path);
  });

  /** The open document at `uri` with its path and place, or undefined for a URI the server does not know. */
  async function lookup(uri: string) {
    const document = documents.get(uri);
    const path = pathOf(uri);
    if (!document || !path) return undefined;
    await ready;
    const place = await index.place(path);
    return { document, path, place, text: document.getText() };
  }

  function shapeOf(place: Place): Shape | undefined {
    return place.repo ? fileShape(place.rel) : undefined;
  }

  connection.onCompletion(
    guarded(async ({ textDocument, position }) => {
      const found = await lookup(textDocument.uri);
      if (!found) return [];
      const { document, place, text } = found;
      const shape = shapeOf(place);
      if (!shape || !place.repo) return [];
      const offset = document.offsetAt(position);
      const context = editorContext(text, offset);
      if (context.at === 'key') {
        const holder = shapeAt(shape, context.path)?.shape;
        if (holder?.type !== 'object') return [];
        const present = new Set(context.present);
        // A member of an exactly-one group is not offered once another member is there.
        for (const group of holder.exclusive ?? []) {
          if (group.some((name) => present.has(name))) for (const name of group) present.add(name);
        }
        const range: Range = context.word
          ? { start: document.positionAt(context.word.start), end: document.positionAt(context.word.end) }
          : { start: position, end: position };
        return Object.entries(holder.properties)
          .filter(([name]) => !present.has(name))
          .map(
            ([name, property]): CompletionItem => ({
              label: name,
              kind: CompletionItemKind.Property,
              detail: property.required ? 'required' : 'optional',
              documentation: { kind: MarkupKind.Markdown, value: describeProperty(name, property) },
              textEdit: { range, newText: name },
            }),
          );
      }
      if (context.at === 'value') {
        // `@` typed where a value starts: the directives that value takes.
        const line = text.slice(text.lastIndexOf('\n', offset - 1) + 1, offset);
        const typed = /@[A-Za-z_]*$/.exec(line)?.[0];
        const value = shapeAt(shape, context.path)?.shape;
        if (typed === undefined || !value) return [];
        const takes =
          value.type === 'ref'
            ? ['ref']
            : value.type === 'json' || value.type === 'schema'
              ? ['json']
              : value.type === 'map' && value.values.type === 'json'
                ? ['json']
                : [];
        const range: Range = { start: document.positionAt(offset - typed.length), end: position };
        return takes.map(
          (name): CompletionItem => ({
            label: `@${name}`,
            kind: CompletionItemKind.Function,
            detail: name === 'ref' ? describeShape(value) : 'the value of a .json file of the repo',
            textEdit: { range, newText: `@${name}("$1")` },
            insertTextFormat: InsertTextFormat.Snippet,
          }),
        );
      }
      if (context.at === 'ref') {
        const kind = refKindAt(shape, context.path);
        if (!kind || kind === 'secret') return [];
        const range: Range = context.word
          ? { start: document.positionAt(context.word.start), end: document.positionAt(context.word.end) }
          : { start: position, end: position };
        return index
          .resources(place.repo)
          .filter((r) => r.kind === kind)
          .map(
            (r): CompletionItem => ({
              label: r.name,
              kind: CompletionItemKind.Reference,
              detail: `${r.kind} · ${r.file}`,
              documentation: resourceDescription(place.repo?.compiled, r.kind, r.name),
              textEdit: { range, newText: context.word ? r.name : `"${r.name}"` },
            }),
          );
      }
      return [];
    }),
  );

  /** The `@ref` target at a position: its resource, when it names one of the repo. */
  async function refTarget(uri: string, position: Position) {
    const found = await lookup(uri);
    if (!found?.place.repo) return undefined;
    const { document, place, text } = found;
    const repo = place.repo as Repo;
    // The character under the cursor: an offset just after it is inside the word that holds it.
    const context = editorContext(text, document.offsetAt(position) + 1);
    if (context.at !== 'ref' || !context.word) return { found, context };
    const shape = shapeOf(place);
    const kind = shape ? refKindAt(shape, context.path) : undefined;
    const name = context.word.text;
    const resource = index.resources(repo).find((r) => r.name === name && (kind === undefined || r.kind === kind));
    return { found, context, resource, repo };
  }

  connection.onHover(
    guarded(async ({ textDocument, position }) => {
      const target = await refTarget(textDocument.uri, position);
      if (!target) return null;
      const { found, context } = target;
      const { document, place } = found;
      if (context.at === 'ref' && context.word) {
        const range = { start: document.positionAt(context.word.start), end: document.positionAt(context.word.end) };
        if (!target.resource || !target.repo) return null;
        const { kind, name, file } = target.resource;
        const description = resourceDescription(target.repo.compiled, kind, name);
        const value = `**${name}**: ${kind} in \`${file}\`${description ? `\n\n${description}` : ''}`;
        return { contents: { kind: MarkupKind.Markdown, value }, range };
      }
      if (context.at === 'key' && context.word) {
        const shape = shapeOf(place);
        const found = shape ? shapeAt(shape, [...context.path, context.word.text]) : undefined;
        if (!found?.property) return null;
        const range = { start: document.positionAt(context.word.start), end: document.positionAt(context.word.end) };
        return {
          contents: { kind: MarkupKind.Markdown, value: describeProperty(context.word.text, found.property) },
          range,
        };
      }
      return null;
    }),
  );

  connection.onDefinition(
    guarded(async ({ textDocument, position }): Promise<Location | null> => {
      const target = await refTarget(textDocument.uri, position);
      if (!target?.resource || !target.repo) return null;
      const path = join(target.repo.root, ...target.resource.file.split('/'));
      const start = { line: 0, character: 0 };
      return { uri: uriOf(path), range: { start, end: start } };
    }),
  );

  connection.onDocumentFormatting(
    guarded(async ({ textDocument }): Promise<TextEdit[]> => {
      const document = documents.get(textDocument.uri);
      if (!document) return [];
      const text = document.getText();
      const formatted = formatMtr(text, textDocument.uri);
      if (formatted.diagnostics.some((d) => d.severity === 'error') || formatted.text === text) return [];
      const range = { start: { line: 0, character: 0 }, end: document.positionAt(text.length) };
      return [{ range, newText: formatted.text }];
    }),
  );

  documents.listen(connection);
  connection.listen();
}

/** `mt lsp`: the language server on stdin and stdout. */
export function startStdioServer(): void {
  const connection = createConnection(ProposedFeatures.all, process.stdin, process.stdout, {
    // A request cancelled before it started is answered at once.
    cancelUndispatched: (message) => ({
      jsonrpc: '2.0',
      id: (message as RequestMessage).id,
      error: new ResponseError(LSPErrorCodes.RequestCancelled, 'the request was cancelled'),
    }),
  });
  startServer(connection);
}
