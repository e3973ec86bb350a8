import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compileRepo, formatMtr, parseMtr, readConfigRepo } from '@maitento/lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CancellationTokenSource,
  CompletionRequest,
  createProtocolConnection,
  DefinitionRequest,
  DidChangeTextDocumentNotification,
  DidChangeWatchedFilesNotification,
  DidOpenTextDocumentNotification,
  DocumentFormattingRequest,
  ExitNotification,
  FileChangeType,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  type Diagnostic as LspDiagnostic,
  type ProtocolConnection,
  PublishDiagnosticsNotification,
  RegistrationRequest,
  type RegistrationParams,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type TextEdit,
} from 'vscode-languageserver-protocol/node';

// The real built `mt lsp --stdio`, driven by a real LSP client over its stdin and stdout.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const mtBin = join(root, 'packages/cli/bin/mt.js');
const seedDir = join(root, 'packages/lang/test/fixtures/seed');
const syntaxDir = join(root, 'packages/lang/test/syntax/fixtures');
const TOP = ['connectors', 'external-operations', 'agents', 'interactions'];

/** A temp workspace: the seed repo, the example repo of the repository's root, the syntax fixtures (no repo). */
function makeWorkspace(): string {
  const ws = mkdtempSync(join(tmpdir(), 'mt-lsp-'));
  cpSync(seedDir, join(ws, 'seed'), { recursive: true });
  for (const top of TOP) cpSync(join(root, top), join(ws, 'example', top), { recursive: true });
  cpSync(syntaxDir, join(ws, 'loose'), { recursive: true });
  return ws;
}

interface Server {
  process: ChildProcess;
  connection: ProtocolConnection;
  diagnostics: Map<string, LspDiagnostic[]>;
  registrations: RegistrationParams[];
  exited: Promise<number | null>;
  /** Resolves when `check` holds for the diagnostics of `uri` (checked on every push), with the time it took. */
  waitFor(uri: string, check: (d: LspDiagnostic[]) => boolean, timeoutMs?: number): Promise<number>;
}

const servers: Server[] = [];

async function startServer(ws: string, initialize = true): Promise<Server> {
  const child = spawn(process.execPath, [mtBin, 'lsp', '--stdio'], {
    cwd: ws,
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const connection = createProtocolConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );
  const diagnostics = new Map<string, LspDiagnostic[]>();
  const waiters = new Set<() => void>();
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    diagnostics.set(params.uri, params.diagnostics);
    for (const waiter of [...waiters]) waiter();
  });
  const registrations: RegistrationParams[] = [];
  connection.onRequest(RegistrationRequest.type, (params) => {
    registrations.push(params);
    return null;
  });
  connection.listen();
  const server: Server = {
    process: child,
    connection,
    diagnostics,
    registrations,
    exited,
    waitFor(uri, check, timeoutMs = 5000) {
      const started = performance.now();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(test);
          reject(new Error(`no matching diagnostics for ${uri}: ${JSON.stringify(diagnostics.get(uri))}`));
        }, timeoutMs);
        const test = () => {
          const current = diagnostics.get(uri);
          if (current !== undefined && check(current)) {
            clearTimeout(timer);
            waiters.delete(test);
            resolve(performance.now() - started);
          }
        };
        waiters.add(test);
        test();
      });
    },
  };
  servers.push(server);
  if (initialize) {
    const uri = pathToFileURL(ws).href;
    await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: uri,
      workspaceFolders: [{ uri, name: 'ws' }],
      capabilities: { workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } },
    });
    await connection.sendNotification(InitializedNotification.type, {});
  }
  return server;
}

const uriOf = (path: string) => pathToFileURL(path).href;

async function open(server: Server, path: string, text = readFileSync(path, 'utf8')): Promise<string> {
  const uri = uriOf(path);
  await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'maitento', version: 1, text },
  });
  return uri;
}

let version = 1;
async function replace(server: Server, uri: string, text: string): Promise<void> {
  await server.connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: ++version },
    contentChanges: [{ text }],
  });
}

/** The expected diagnostics of a repo: the compiler's, as LSP ranges (0-based, UTF-16). */
async function compilerDiagnostics(repoRoot: string): Promise<Map<string, unknown[]>> {
  const compiled = compileRepo(await readConfigRepo(repoRoot));
  const out = new Map<string, unknown[]>();
  for (const d of compiled.diagnostics) {
    const uri = uriOf(join(repoRoot, d.file));
    const start = { line: d.line - 1, character: d.column - 1 };
    const end = d.endLine !== undefined ? { line: d.endLine - 1, character: (d.endColumn ?? 1) - 1 } : start;
    const list = out.get(uri) ?? [];
    list.push({
      range: { start, end },
      severity: d.severity === 'error' ? 1 : 2,
      code: d.code,
      source: 'maitento',
      message: d.hint ? `${d.message}\nhint: ${d.hint}` : d.message,
    });
    out.set(uri, list);
  }
  return out;
}

afterAll(() => {
  for (const server of servers) server.process.kill();
});

describe('mt lsp --stdio', () => {
  let ws: string;
  let server: Server;

  beforeAll(async () => {
    ws = makeWorkspace();
    server = await startServer(ws);
  });
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  it('registers a **/*.mtr and a **/*.json file watcher', async () => {
    await expect.poll(() => server.registrations.length, { timeout: 15_000 }).toBe(1);
    const [registration] = server.registrations[0].registrations;
    expect(registration.method).toBe('workspace/didChangeWatchedFiles');
    expect(registration.registerOptions).toEqual({
      watchers: [{ globPattern: '**/*.mtr' }, { globPattern: '**/*.json' }],
    });
  });

  it('1. publishes for every fixture exactly what the compiler reports', async () => {
    const expected = new Map([
      ...(await compilerDiagnostics(join(ws, 'seed'))),
      ...(await compilerDiagnostics(join(ws, 'example'))),
    ]);
    expect(expected.size).toBeGreaterThanOrEqual(3);
    for (const [uri, list] of expected) await server.waitFor(uri, (d) => d.length === list.length);
    for (const [uri, list] of expected) expect(server.diagnostics.get(uri), uri).toEqual(list);
    // Nothing else was reported: the other files of the repos have no diagnostics.
    for (const [uri, list] of server.diagnostics) if (!expected.has(uri)) expect(list, uri).toEqual([]);
    // The syntax fixtures (in no config repo) parse cleanly: opened, each gets an empty list.
    for (const name of ['crlf.mtr', 'messy.mtr', 'nested.mtr']) {
      const path = join(ws, 'loose', name);
      expect(parseMtr(readFileSync(path, 'utf8'), name).diagnostics).toEqual([]);
      const uri = await open(server, path);
      await server.waitFor(uri, (d) => d.length === 0);
    }
  });

  // The 500 ms is a speed aim, measured by `npm run bench:lsp` (keystroke diagnostics p95); a timed
  // assertion here would fail on a loaded CI machine without anything being wrong, so this test asserts the
  // behaviour (the change is pushed without a save, and the fix clears it) under a deadline.
  it('2. a change that breaks a file is pushed without a save, and fixing it clears the list', async () => {
    const path = join(ws, 'example/connectors/open-api/open-meteo-forecast.mtr');
    const text = readFileSync(path, 'utf8');
    const uri = await open(server, path);
    await server.waitFor(uri, (d) => d.length === 0);
    await replace(server, uri, text.replace('method = "GET"', 'method = "GET'));
    await server.waitFor(uri, (d) => d.some((x) => x.code === 'mtr:syntax:unterminated-string'));
    await replace(server, uri, text);
    await server.waitFor(uri, (d) => d.length === 0);
  });

  it("3. deleting a tool on disk (watcher event) gives its user's @ref an unknown-reference error, unopened", async () => {
    const user = uriOf(join(ws, 'example/agents/weather-assistant.mtr'));
    const toolPath = join(ws, 'example/external-operations/open-api/current-weather.mtr');
    const toolText = readFileSync(toolPath, 'utf8');
    expect(readFileSync(fileURLToPath(user), 'utf8')).toContain('@ref("current-weather")');
    expect(server.diagnostics.get(user) ?? []).toEqual([]);
    unlinkSync(toolPath);
    await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, {
      changes: [{ uri: uriOf(toolPath), type: FileChangeType.Deleted }],
    });
    await server.waitFor(user, (d) =>
      d.some((x) => x.code === 'mtr:ref:unknown' && x.message.includes('current-weather')),
    );
    writeFileSync(toolPath, toolText);
    await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, {
      changes: [{ uri: uriOf(toolPath), type: FileChangeType.Created }],
    });
    await server.waitFor(user, (d) => d.length === 0);
  });

  it('3b. editing a connector so that a tool loses what it binds re-checks the tool, unopened', async () => {
    // The tool binds the query parameter `current` of this connector: renaming the parameter breaks the tool.
    const connector = join(ws, 'seed/connectors/open-api/open-meteo-forecast.mtr');
    const tool = uriOf(join(ws, 'seed/external-operations/open-api/current-weather.mtr'));
    const text = readFileSync(connector, 'utf8');
    expect(text).toContain('name = "current"');
    const uri = await open(server, connector);
    await replace(server, uri, text.replace('name = "current"', 'name = "now"'));
    await server.waitFor(tool, (d) => d.some((x) => x.code === 'mtr:binding:unknown-target'));
    await replace(server, uri, text);
    await server.waitFor(tool, (d) => d.length === 0);
  });

  it('3c. a JSON file an @json names, changed or deleted on disk (watcher event), re-checks the file naming it', async () => {
    const schema = join(ws, 'example/interactions/one-shot/check-refund.schema.json');
    const user = uriOf(join(ws, 'example/interactions/one-shot/check-refund.mtr'));
    expect(readFileSync(fileURLToPath(user), 'utf8')).toContain(
      '@json("interactions/one-shot/check-refund.schema.json")',
    );
    const good = readFileSync(schema, 'utf8');
    const changed = async (type: FileChangeType) =>
      server.connection.sendNotification(DidChangeWatchedFilesNotification.type, {
        changes: [{ uri: uriOf(schema), type }],
      });
    expect(server.diagnostics.get(user) ?? []).toEqual([]);
    // Valid JSON, but not a JSON Schema: the interaction's result.schema is refused, at the @json.
    writeFileSync(schema, JSON.stringify({ type: 'objekt' }));
    await changed(FileChangeType.Changed);
    await server.waitFor(user, (d) => d.some((x) => x.range.start.line === 20 && x.severity === 1));
    unlinkSync(schema);
    await changed(FileChangeType.Deleted);
    await server.waitFor(user, (d) => d.some((x) => x.code === 'mtr:json:not-found'));
    writeFileSync(schema, good);
    await changed(FileChangeType.Created);
    await server.waitFor(user, (d) => d.length === 0);
  });

  it('3d. an @json typed in the editor naming a file outside the resource folders reads it, then follows it', async () => {
    const path = join(ws, 'example/interactions/one-shot/check-refund.mtr');
    const schema = join(ws, 'example/schemas/refund.json');
    mkdirSync(dirname(schema), { recursive: true });
    writeFileSync(schema, JSON.stringify({ type: 'object' }));
    const text = readFileSync(path, 'utf8');
    const uri = await open(
      server,
      path,
      text.replace('interactions/one-shot/check-refund.schema.json', 'schemas/refund.json'),
    );
    await server.waitFor(uri, (d) => d.length === 0);
    writeFileSync(schema, '{ "type": ');
    await server.connection.sendNotification(DidChangeWatchedFilesNotification.type, {
      changes: [{ uri: uriOf(schema), type: FileChangeType.Changed }],
    });
    await server.waitFor(uriOf(schema), (d) => d.some((x) => x.code === 'mtr:json:invalid'));
    await replace(server, uri, text);
    await server.waitFor(uriOf(schema), (d) => d.length === 0);
    await server.waitFor(uri, (d) => d.length === 0);
  });

  it('4a. a trigger: `on` (another run ending) or `verify`, never both offered; `on.runCompleted` takes interactions', async () => {
    const trigger = join(ws, 'example/triggers/after-triage.mtr');
    const text = 'interaction = @ref("triage")\n\non = { runCompleted = @ref("tri") }\n';
    mkdirSync(dirname(trigger), { recursive: true });
    const uri = await open(server, trigger, text);
    const items = await server.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position: { line: 1, character: 0 },
    });
    const labels = (Array.isArray(items) ? items : (items?.items ?? [])).map((i) => i.label);
    expect(labels).toContain('inputs');
    expect(labels).not.toContain('verify');
    expect(labels).not.toContain('on');
    const refs = await server.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position: { line: 2, character: text.split('\n')[2]!.indexOf('tri') + 3 },
      context: { triggerKind: 2, triggerCharacter: '"' },
    });
    const refLabels = (Array.isArray(refs) ? refs : []).map((i) => i.label);
    expect(refLabels).toContain('triage');
    expect(refLabels).not.toContain('current-weather');
    // Neither: the compiler's diagnostic, in the editor.
    await replace(server, uri, 'interaction = @ref("triage")\n');
    await server.waitFor(uri, (d) => d.some((x) => x.code === 'mtr:trigger:source'));
    await server.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  });

  it("4b. an interaction's limit offers perKey and perEndUser, and a start limit's counts calls and per", async () => {
    const file = join(ws, 'example/interactions/one-shot/limited.mtr');
    const text = 'task = "t"\nlimit = {  }\nlimit.perKey = {  }\n';
    mkdirSync(dirname(file), { recursive: true });
    const uri = await open(server, file, text);
    const at = async (line: number, character: number) => {
      const items = await server.connection.sendRequest(CompletionRequest.type, {
        textDocument: { uri },
        position: { line, character },
      });
      return (Array.isArray(items) ? items : (items?.items ?? [])).map((i) => i.label).sort();
    };
    expect(await at(1, 10)).toEqual(['perEndUser', 'perKey']);
    expect(await at(2, 17)).toEqual(['calls', 'per']);
    await server.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  });

  it('4. completes valid properties without duplicates, @ref targets from unopened files; hover; definition', async () => {
    const agent = join(ws, 'example/agents/new-agent.mtr');
    const text = 'model = "openai:gpt-4o-mini"\n\nfunctions = [ { ref = @ref("cur") } ]\n';
    mkdirSync(dirname(agent), { recursive: true });
    const uri = await open(server, agent, text);
    const items = await server.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position: { line: 1, character: 0 },
    });
    const labels = (Array.isArray(items) ? items : (items?.items ?? [])).map((i) => i.label);
    expect(labels.sort()).toEqual(['instructions', 'summary']);
    const first = Array.isArray(items) ? items[0] : undefined;
    expect(JSON.stringify(first?.documentation)).toMatch(/required|optional/);

    // Inside an object of an array: the properties of a function entry, minus `ref` and `agent` (it holds one of them).
    const inner = await server.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position: { line: 2, character: 15 },
    });
    expect((Array.isArray(inner) ? inner : []).map((i) => i.label)).toEqual([]);

    const refs = await server.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position: { line: 2, character: text.split('\n')[2].indexOf('cur') + 3 },
      context: { triggerKind: 2, triggerCharacter: '"' },
    });
    const refLabels = (Array.isArray(refs) ? refs : []).map((i) => i.label);
    // Only tools (the kind `functions[].ref` takes), from every file of the repo, none of which is open.
    expect(refLabels).toContain('current-weather');
    expect(refLabels).toContain('get-order');
    expect(refLabels).not.toContain('weather-assistant');
    expect(refLabels).not.toContain('open-meteo-forecast');
    expect(new Set(refLabels).size).toBe(refLabels.length);

    // `@` where a value starts: the directive that value takes (a tool reference here).
    await replace(server, uri, 'model = "openai:gpt-4o-mini"\nfunctions = [ { ref = @ } ]\n');
    const directives = await server.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position: { line: 1, character: 'functions = [ { ref = @'.length },
      context: { triggerKind: 2, triggerCharacter: '@' },
    });
    expect((Array.isArray(directives) ? directives : []).map((i) => [i.label, i.textEdit?.newText])).toEqual([
      ['@ref', '@ref("$1")'],
    ]);

    const line = 'functions = [ { ref = @ref("current-weather") } ]';
    await replace(server, uri, `model = "openai:gpt-4o-mini"\n${line}\n`);
    const at = { line: 1, character: line.indexOf('current-weather') + 2 };
    const hover = await server.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: at });
    const hoverText = JSON.stringify(hover?.contents);
    expect(hoverText).toContain('tool');
    expect(hoverText).toContain('external-operations/open-api/current-weather.mtr');
    expect(hoverText).toContain('Gets the current temperature');

    const keyHover = await server.connection.sendRequest(HoverRequest.type, {
      textDocument: { uri },
      position: { line: 0, character: 1 },
    });
    expect(JSON.stringify(keyHover?.contents)).toContain('provider:name');

    const definition = await server.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri },
      position: at,
    });
    expect(definition).toEqual({
      uri: uriOf(join(ws, 'example/external-operations/open-api/current-weather.mtr')),
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    });
    await replace(server, uri, `model = "openai:gpt-4o-mini"\n${line.replace('current-weather', 'nope')}\n`);
    const none = await server.connection.sendRequest(DefinitionRequest.type, {
      textDocument: { uri },
      position: { line: 1, character: line.indexOf('current-weather') + 1 },
    });
    expect(none).toBeNull();
  });

  it('checks a file opened from outside the workspace folders with the config repo around it', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'mt-lsp-outside-'));
    try {
      cpSync(seedDir, outside, { recursive: true });
      const path = join(outside, 'agents/weather-agent-functions.mtr');
      const text =
        'model = "openai:gpt-4o-mini"\ninstructions = "Hi"\nfunctions = [ { ref = @ref("current-weathr") } ]\n';
      const uri = await open(server, path, text);
      await server.waitFor(uri, (d) =>
        d.some((x) => x.code === 'mtr:ref:unknown' && x.message.includes('current-weathr')),
      );
      await replace(server, uri, text.replace('current-weathr', 'current-weather'));
      await server.waitFor(uri, (d) => d.length === 0);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("5. formatting is the formatter's output, idempotent, and nothing for a broken file", async () => {
    const path = join(ws, 'loose/messy.mtr');
    const text = readFileSync(path, 'utf8');
    const expected = formatMtr(text).text;
    expect(expected).not.toBe(text);
    const uri = await open(server, path, text);
    const edits = (await server.connection.sendRequest(DocumentFormattingRequest.type, {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    })) as TextEdit[];
    expect(edits).toHaveLength(1);
    const lines = text.split('\n');
    expect(edits[0].range).toEqual({
      start: { line: 0, character: 0 },
      end: { line: lines.length - 1, character: lines[lines.length - 1].length },
    });
    expect(edits[0].newText).toBe(expected);
    await replace(server, uri, expected);
    const again = await server.connection.sendRequest(DocumentFormattingRequest.type, {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    expect(again).toEqual([]);
    await replace(server, uri, 'method = "GET\nurl="x"\n');
    const broken = await server.connection.sendRequest(DocumentFormattingRequest.type, {
      textDocument: { uri },
      options: { tabSize: 2, insertSpaces: true },
    });
    expect(broken).toEqual([]);
  });

  it('6. an emoji before an error keeps the range right (UTF-16)', async () => {
    const path = join(ws, 'example/agents/emoji.mtr');
    const line = 'instructions = "🙂🙂 say 👋" summry = "x"';
    const uri = await open(server, path, `model = "openai:gpt-4o-mini"\n${line}\n`);
    await server.waitFor(uri, (d) => d.some((x) => x.code === 'mtr:property:unknown'));
    const found = server.diagnostics.get(uri)?.find((x) => x.code === 'mtr:property:unknown');
    const column = line.indexOf('summry');
    expect(found?.range).toEqual({
      start: { line: 1, character: column },
      end: { line: 1, character: column + 'summry'.length },
    });
  });

  it('7. survives garbage, a 5 MB file and an unclosed string; unknown URIs give empty results', async () => {
    const garbage = join(ws, 'example/agents/garbage.mtr');
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
    const garbageUri = await open(server, garbage, bytes.toString('latin1'));
    await server.waitFor(garbageUri, (d) => d.length > 0);

    const big = join(ws, 'loose/big.mtr');
    const entry = 'description = "a fairly long line of text to make the file big, again and again"\n';
    const bigText = entry.repeat(Math.ceil((5 * 1024 * 1024) / entry.length));
    const bigUri = await open(server, big, bigText);
    await server.waitFor(bigUri, () => true, 20_000);

    const unclosed = await open(server, join(ws, 'loose/unclosed.mtr'), 'x = "never closed\ny = 1\n');
    await server.waitFor(unclosed, (d) => d.some((x) => x.code === 'mtr:syntax:unterminated-string'));

    const unknown = 'file:///nowhere/at/all.mtr';
    const position = { line: 0, character: 0 };
    expect(
      await server.connection.sendRequest(CompletionRequest.type, { textDocument: { uri: unknown }, position }),
    ).toEqual([]);
    expect(
      await server.connection.sendRequest(HoverRequest.type, { textDocument: { uri: unknown }, position }),
    ).toBeNull();
    expect(
      await server.connection.sendRequest(DefinitionRequest.type, { textDocument: { uri: unknown }, position }),
    ).toBeNull();
    expect(
      await server.connection.sendRequest(DocumentFormattingRequest.type, {
        textDocument: { uri: unknown },
        options: { tabSize: 2, insertSpaces: true },
      }),
    ).toEqual([]);
    // Still alive and answering after all of it.
    const items = await server.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: garbageUri },
      position,
    });
    expect(Array.isArray(items)).toBe(true);
  });

  it('7b. a cancelled request answers RequestCancelled (-32800)', async () => {
    // Formatting 5 MB takes long enough that the cancel, sent right after the request, arrives while it runs.
    const entry = 'description = "a fairly long line of text to make the file big, again and again"\n';
    const uri = await open(
      server,
      join(ws, 'loose/big-to-cancel.mtr'),
      entry.repeat(Math.ceil((5 * 1024 * 1024) / entry.length)),
    );
    const source = new CancellationTokenSource();
    const pending = server.connection.sendRequest(
      DocumentFormattingRequest.type,
      { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } },
      source.token,
    );
    source.cancel();
    await expect(pending).rejects.toMatchObject({ code: -32800 });
    // The server goes on answering.
    const uriMessy = uriOf(join(ws, 'loose/messy.mtr'));
    const items = await server.connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: uriMessy },
      position: { line: 0, character: 0 },
    });
    expect(items).toEqual([]);
  });

  it('7c. exits 0 after shutdown and exit', async () => {
    await server.connection.sendRequest(ShutdownRequest.type);
    await server.connection.sendNotification(ExitNotification.type);
    expect(await server.exited).toBe(0);
  });
});

describe('mt lsp exit without shutdown', () => {
  it('7d. exits 1 on exit alone', async () => {
    const ws = makeWorkspace();
    try {
      const server = await startServer(ws);
      await server.connection.sendNotification(ExitNotification.type);
      expect(await server.exited).toBe(1);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });
});
