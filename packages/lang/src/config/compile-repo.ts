import { createEgressPolicy, type EgressPolicy } from '@maitento/egress/static';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { parseMtr } from '../syntax/parse.js';
import { checkConnectorAddress } from './address-check.js';
import { checkAgent, checkAgentCycles } from './agent-checks.js';
import { checkAuthProvider } from './auth-provider-checks.js';
import { checkScheduleInputs, checkScheduleOwn, checkTriggerInputs, checkTriggerOwn } from './schedule-checks.js';
import { buildResource } from './build-resources.js';
import type { Built, CompileContext } from './compile-context.js';
import { checkConnector } from './connector-checks.js';
import { checkInteraction } from './interaction-checks.js';
import { checkRemoteSchema, checkResultSchema, checkSchema } from './json-schema-check.js';
import { CONVERSATION_SHAPE, KIND_SHAPES, MCP_CONNECTOR_SHAPE } from './kind-shapes.js';
import { type NameIndex, resolveReferences } from './references.js';
import {
  classifyPath,
  createJsonLoader,
  isKebabCase,
  normaliseJsonPath,
  type RepoFile,
  toKebabCase,
} from './repo-layout.js';
import { createReporter, FILE_START, type Reporter, sortDiagnostics } from './report.js';
import type {
  Json,
  Agent,
  AuthProvider,
  Connector,
  Interaction,
  RemoteTool,
  Schedule,
  Trigger,
  Resource,
  ResourceKind,
  Tool,
  ToolDefinition,
} from './resources.js';
import { checkSecrets } from './secret-checks.js';
import { checkShape, type FoundRef } from './shape.js';
import { checkTool } from './tool-checks.js';
import { toolDefinition } from './tool-definition.js';
import { buildTree, type JsonLoader, type ValueTree } from './value-tree.js';

/** Options of {@link compileRepo}. */
export interface CompileOptions {
  /** The address rules connector URLs are judged by; default: public addresses only. */
  egress?: EgressPolicy;
  /** The secret names that exist (the server passes its namespace's at deploy); unchecked when absent. */
  knownSecrets?: string[];
  /** The platform's own API origin (`MT_PUBLIC_URL`), the only place `auth = "Maitento"` connectors may call. */
  platformOrigin?: string;
  /**
   * The remote tools of the repo's MCP connectors, by connector name, as the server listed them at deploy: each
   * becomes its connector's `schema.request` (and `description` when the file gives none). Absent (`mt check`):
   * MCP connectors compile without a request schema, and what depends on it is not checked.
   */
  remoteTools?: ReadonlyMap<string, RemoteTool>;
}

/** Where a resource came from. */
export interface ResourceSource {
  kind: ResourceKind;
  name: string;
  file: string;
}

/** The result of compiling a config repo. */
export interface CompiledRepo {
  /** False when any diagnostic is an error. */
  ok: boolean;
  /** Every diagnostic of the repo, sorted by file, line and column. */
  diagnostics: Diagnostic[];
  /** Resources of the files that parsed and matched their kind's properties (also when `ok` is false). */
  authProviders: AuthProvider[];
  connectors: Connector[];
  tools: Tool[];
  agents: Agent[];
  interactions: Interaction[];
  schedules: Schedule[];
  triggers: Trigger[];
  /** Every resource file of the repo, also those with errors, sorted by file. */
  sources: ResourceSource[];
  /** The model-facing definition of every built tool whose connector was built, by tool name. */
  definitions: Map<string, ToolDefinition>;
}

interface Entry extends ResourceSource {
  /** A connector of `connectors/mcp/`. */
  mcp: boolean;
  /** An interaction of `interactions/conversation/`. */
  conversation: boolean;
}

/**
 * What one file's own checks give, which no other file changes: parse, value tree, shape (and the references
 * found), the resource, and for a connector its own checks (schemas, address). Kept while its text and the texts
 * of the `.json` files it loaded stay the same.
 */
interface FileResult {
  text: string;
  /** The `.json` files its `@json` directives loaded (normalised paths), with their texts then. */
  json: Map<string, string | undefined>;
  tree: ValueTree;
  refs: FoundRef[];
  resource?: Resource;
  /** Diagnostics of parsing, the value tree and the shape (in the order compileRepo reports them). */
  own: Diagnostic[];
  /** Diagnostics of a connector's or an auth provider's own checks. */
  connector: Diagnostic[];
}

/** What the cross-resource checks of one resource give; kept until it or what its `@ref`s name changes. */
interface LateResult {
  diagnostics: Diagnostic[];
  definition?: ToolDefinition;
}

/** The files of the last check: their places, names, and the diagnostics of the layout (folders, names). */
interface Layout {
  /** The paths as given, in their order. */
  paths: string[];
  entries: Entry[];
  byFile: Map<string, Entry>;
  sources: Diagnostic[];
  names: NameIndex;
}

/** A `.json` file as parsed once per text: its value, or the diagnostic of its bad JSON. */
interface JsonResult {
  text: string;
  value: Json | undefined;
  invalid?: Diagnostic;
}

function normalisePath(path: string): string {
  if (!path.includes('\\') && !path.startsWith('./')) return path;
  return path.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
}

function hasError(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

function readSources(files: readonly RepoFile[], reporter: Reporter): { entries: Entry[]; texts: Map<string, string> } {
  const texts = new Map<string, string>();
  for (const f of files) texts.set(normalisePath(f.path), f.content);
  const entries: Entry[] = [];
  const byName = new Map<string, Entry>();
  for (const file of [...texts.keys()].filter((p) => p.endsWith('.mtr')).sort()) {
    const place = classifyPath(file);
    if (!place) {
      reporter.report('mtr:repo:unknown-folder', { file }, file, undefined);
      continue;
    }
    const entry: Entry = { ...place, file };
    const key = `${place.kind}\u0000${place.name.toLowerCase()}`;
    const first = byName.get(key);
    if (first) {
      reporter.report(
        'mtr:repo:duplicate-name',
        { kind: place.kind, name: place.name, first: first.file, second: file },
        file,
        undefined,
      );
      continue;
    }
    byName.set(key, entry);
    if (!isKebabCase(place.name)) {
      const suggestion = toKebabCase(place.name) || 'my-resource';
      reporter.report(
        'mtr:repo:name-style',
        { kind: place.kind, name: place.name, suggestion },
        file,
        undefined,
        'warning',
      );
    }
    entries.push(entry);
  }
  return { entries, texts };
}

const nameKey = (kind: string, name: string) => `${kind}\u0000${name}`;

/**
 * Compiles one config repo again and again as its files change (the language server's editor buffers), with
 * the very checks of {@link compileRepo} and the same result, redoing only what a change can affect: a file's own
 * checks (parse, value tree, shape, resource, a connector's schemas and address) run again only when its text or a
 * `.json` file it loads changed; the cross-resource checks (tools against their connector, agents, interactions,
 * tool definitions) only for the changed files and the files whose `@ref`s name, directly or through others, a
 * resource a changed file defines or defined. References are resolved again for the changed files, or for every
 * file when the set of names changed; the checks that span the whole repo (agent cycles, secrets) always run.
 */
export class RepoChecker {
  private readonly files = new Map<string, FileResult>();
  private readonly late = new Map<string, LateResult>();
  private readonly refs = new Map<string, Diagnostic[]>();
  private readonly jsons = new Map<string, JsonResult>();
  /** The file defining each name (`kind\0name`) at the last check. */
  private byName = new Map<string, string>();
  /** The files whose `@ref`s name each name (`kind\0name`). */
  private readonly dependents = new Map<string, Set<string>>();
  private layout: Layout | undefined;
  private ctx: CompileContext | undefined;
  private built: Record<ResourceKind, Entry[]> = {
    'auth-provider': [],
    connector: [],
    tool: [],
    agent: [],
    interaction: [],
    schedule: [],
    trigger: [],
  };
  /** The files whose checks the last {@link check} ran (the others' results were reused). */
  checked: string[] = [];
  /** The `.json` files (normalised repo paths) the `@json` directives of the last {@link check} named. */
  jsonPaths = new Set<string>();

  constructor(private readonly options: CompileOptions = {}) {}

  /** Compiles the repo's files as they are now: the result of `compileRepo(files, options)`. Never throws. */
  check(files: readonly RepoFile[]): CompiledRepo {
    try {
      return this.run(files);
    } catch (error) {
      this.reset();
      return crashed(files, error);
    }
  }

  private reset(): void {
    this.files.clear();
    this.late.clear();
    this.refs.clear();
    this.jsons.clear();
    this.byName = new Map();
    this.dependents.clear();
    this.layout = undefined;
    this.ctx = undefined;
    this.checked = [];
    this.jsonPaths = new Set();
  }

  private parseJson(path: string, text: string): JsonResult {
    const known = this.jsons.get(path);
    if (known?.text === text) return known;
    const result: JsonResult = { text, value: undefined };
    try {
      result.value = JSON.parse(text) as Json;
    } catch {
      // The diagnostic of createJsonLoader; compileRepo reports it once, at the first file that loads the file.
      const reporter = createReporter();
      createJsonLoader(new Map([[path, text]]), reporter)(path, path, FILE_START);
      result.invalid = reporter.diagnostics[0];
    }
    this.jsons.set(path, result);
    return result;
  }

  /** A file's own checks, as compileRepo runs them for one entry. */
  private checkFile(entry: Entry, text: string, texts: ReadonlyMap<string, string>, keepAst: boolean): FileResult {
    const reporter = createReporter();
    const json = new Map<string, string | undefined>();
    const loadJson: JsonLoader = (path, from, span) => {
      const normal = normaliseJsonPath(path);
      if (!normal.ok) {
        reporter.report('mtr:json:path', { path, reason: normal.reason }, from, span);
        return undefined;
      }
      const jsonText = texts.get(normal.path);
      json.set(normal.path, jsonText);
      if (jsonText === undefined) {
        reporter.report('mtr:json:not-found', { path }, from, span);
        return undefined;
      }
      return this.parseJson(normal.path, jsonText).value;
    };
    const parsed = parseMtr(text, entry.file);
    reporter.diagnostics.push(...parsed.diagnostics);
    // A whole repo's trees do not keep their ASTs (positions come from parsing again when asked for); a file
    // checked again after the first check, the one being edited, keeps its AST rather than being parsed twice.
    const reparse = keepAst ? undefined : () => parseMtr(text, entry.file).ast;
    const tree = buildTree(parsed.ast, reporter, loadJson, reparse);
    const shape = entry.mcp ? MCP_CONNECTOR_SHAPE : entry.conversation ? CONVERSATION_SHAPE : KIND_SHAPES[entry.kind];
    const refs: FoundRef[] = [];
    checkShape(tree, shape, reporter, refs);
    const result: FileResult = { text, json, tree, refs, own: reporter.diagnostics, connector: [] };
    if (!hasError(reporter.diagnostics)) {
      const mcp = entry.mcp ? { remote: this.options.remoteTools?.get(entry.name) } : undefined;
      result.resource = buildResource(entry.kind, entry.name, tree.root, mcp, entry.conversation);
    }
    if (result.resource?.kind === 'connector') {
      const resource = result.resource;
      const own = createReporter();
      checkConnector(resource, tree, own);
      if (resource.mcp !== undefined) checkRemoteSchema(resource, tree, own);
      else {
        checkSchema(resource.schema.request, ['schema', 'request'], tree, own);
        checkSchema(resource.schema.response, ['schema', 'response'], tree, own);
      }
      if (!hasError(own.diagnostics)) {
        const policy = this.options.egress ?? createEgressPolicy();
        checkConnectorAddress(resource, tree, own, policy, this.options.platformOrigin);
      }
      result.connector = own.diagnostics;
    }
    if (result.resource?.kind === 'auth-provider') {
      const own = createReporter();
      checkAuthProvider(result.resource, tree, own, this.options.egress ?? createEgressPolicy());
      result.connector = own.diagnostics;
    }
    if (result.resource?.kind === 'schedule') {
      const own = createReporter();
      checkScheduleOwn(result.resource, tree, own);
      result.connector = own.diagnostics;
    }
    if (result.resource?.kind === 'trigger') {
      const own = createReporter();
      checkTriggerOwn(result.resource, tree, own);
      result.connector = own.diagnostics;
    }
    return result;
  }

  private fresh(known: FileResult | undefined, text: string, texts: ReadonlyMap<string, string>): boolean {
    if (known?.text !== text) return false;
    for (const [path, jsonText] of known.json) if (texts.get(path) !== jsonText) return false;
    return true;
  }

  /** Whether `files` names the same paths, in the same order, as the files the layout was made of. */
  private sameLayout(files: readonly RepoFile[]): boolean {
    const layout = this.layout;
    if (!layout || layout.paths.length !== files.length) return false;
    for (let i = 0; i < files.length; i++) if (files[i].path !== layout.paths[i]) return false;
    return true;
  }

  private run(files: readonly RepoFile[]): CompiledRepo {
    const options = this.options;
    const texts = new Map<string, string>();
    for (const f of files) texts.set(normalisePath(f.path), f.content);
    // The first check (all `compileRepo` makes) keeps no file's AST; later ones keep the ASTs of the files they check.
    const keepAst = this.layout !== undefined;
    // The files' places, names and the diagnostics of the repo's layout, again only when files came or went.
    const relayout = !this.sameLayout(files);
    if (relayout) {
      const reporter = createReporter();
      const { entries } = readSources(files, reporter);
      const kinds: Record<ResourceKind, Entry[]> = {
        'auth-provider': [],
        connector: [],
        tool: [],
        agent: [],
        interaction: [],
        schedule: [],
        trigger: [],
      };
      for (const entry of entries) kinds[entry.kind].push(entry);
      const names = (kind: ResourceKind) => new Set(kinds[kind].map((e) => e.name));
      this.layout = {
        paths: files.map((f) => f.path),
        entries,
        byFile: new Map(entries.map((e) => [e.file, e])),
        sources: reporter.diagnostics,
        names: {
          'auth-provider': names('auth-provider'),
          connector: names('connector'),
          tool: names('tool'),
          agent: names('agent'),
          interaction: names('interaction'),
          schedule: names('schedule'),
          trigger: names('trigger'),
        },
      };
    }
    const layout = this.layout as Layout;
    const { entries } = layout;
    const checked = new Set<string>();

    // 1. Each file's own checks, again only for a file whose text (or a .json file it loads) changed.
    const changed: string[] = [];
    const replaced: [Entry, FileResult | undefined][] = [];
    for (const entry of entries) {
      const text = texts.get(entry.file) ?? '';
      const known = this.files.get(entry.file);
      if (known && this.fresh(known, text, texts)) continue;
      this.files.set(entry.file, this.checkFile(entry, text, texts, keepAst));
      checked.add(entry.file);
      changed.push(nameKey(entry.kind, entry.name));
      replaced.push([entry, known]);
    }
    if (relayout) {
      // Files gone, and names now defined by another file (a duplicate removed) or by none.
      for (const file of [...this.files.keys()]) if (!layout.byFile.has(file)) this.files.delete(file);
      for (const file of [...this.late.keys()]) if (!layout.byFile.has(file)) this.late.delete(file);
      for (const file of [...this.refs.keys()]) if (!layout.byFile.has(file)) this.refs.delete(file);
      const byName = new Map<string, string>();
      for (const entry of entries) byName.set(nameKey(entry.kind, entry.name), entry.file);
      for (const [key, file] of byName) if (this.byName.get(key) !== file) changed.push(key);
      for (const key of this.byName.keys()) if (!byName.has(key)) changed.push(key);
      this.byName = byName;
    }
    const result = (entry: Entry) => this.files.get(entry.file) as FileResult;

    // 2. References, against the names of the whole repo: every file's when files came or went.
    for (const entry of entries) {
      if (!relayout && !checked.has(entry.file) && this.refs.has(entry.file)) continue;
      const reporter = createReporter();
      resolveReferences(entry.file, result(entry).refs, layout.names, options.knownSecrets, reporter);
      this.refs.set(entry.file, reporter.diagnostics);
    }

    // 3. Who names whom: kept up to date with the files checked again.
    const link = (entry: Entry, refs: readonly FoundRef[], add: boolean) => {
      for (const { ref, kind } of refs) {
        if (kind === 'secret') continue;
        const key = nameKey(kind, ref.name);
        let users = this.dependents.get(key);
        if (!users) {
          users = new Set();
          this.dependents.set(key, users);
        }
        if (add) users.add(entry.file);
        else users.delete(entry.file);
      }
    };
    if (relayout) {
      this.dependents.clear();
      for (const entry of entries) link(entry, result(entry).refs, true);
    } else {
      for (const [entry, known] of replaced) {
        if (known) link(entry, known.refs, false);
        link(entry, result(entry).refs, true);
      }
    }

    // 4. The files to check against others: the changed ones, and those whose @refs name a changed one (and so on).
    const dirty = new Set(checked);
    if (relayout) for (const entry of entries) if (!this.late.has(entry.file)) dirty.add(entry.file);
    const queue = [...changed];
    const reached = new Set(changed);
    for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
      for (const file of this.dependents.get(key) ?? []) {
        const entry = layout.byFile.get(file);
        if (!entry) continue;
        dirty.add(file);
        const next = nameKey(entry.kind, entry.name);
        if (!reached.has(next)) {
          reached.add(next);
          queue.push(next);
        }
      }
    }

    // The built resources by name, in the order of the files (the order compileRepo's checks go through them).
    const rebuild =
      relayout || !this.ctx || replaced.some(([entry, known]) => !known?.resource !== !result(entry).resource);
    if (rebuild) {
      const ctx: CompileContext = {
        reporter: createReporter(),
        authProviders: new Map(),
        connectors: new Map(),
        tools: new Map(),
        agents: new Map(),
        interactions: new Map(),
        schedules: new Map(),
        triggers: new Map(),
      };
      const built: Record<ResourceKind, Entry[]> = {
        'auth-provider': [],
        connector: [],
        tool: [],
        agent: [],
        interaction: [],
        schedule: [],
        trigger: [],
      };
      for (const entry of entries) {
        const { resource, tree } = result(entry);
        if (!resource) continue;
        setBuilt(ctx, resource, tree);
        built[resource.kind].push(entry);
      }
      this.ctx = ctx;
      this.built = built;
    } else {
      const ctx = this.ctx as CompileContext;
      for (const [entry] of replaced) {
        const { resource, tree } = result(entry);
        if (!resource) continue;
        setBuilt(ctx, resource, tree);
      }
    }
    const ctx = this.ctx as CompileContext;
    const built = this.built;

    // 5. The cross-resource checks of the dirty files; the others keep their last results.
    for (const file of dirty) {
      const entry = layout.byFile.get(file);
      if (!entry) continue;
      const { resource, tree } = result(entry);
      const reporter = createReporter();
      const late: LateResult = { diagnostics: reporter.diagnostics };
      this.late.set(file, late);
      if (!resource) continue;
      const local: CompileContext = { ...ctx, reporter };
      if (resource.kind === 'tool') {
        checkTool(resource, tree, local);
        const connector = ctx.connectors.get(resource.connector)?.resource;
        if (connector) late.definition = toolDefinition(resource, connector);
      } else if (resource.kind === 'agent') checkAgent(resource, tree, local);
      else if (resource.kind === 'interaction') {
        checkInteraction(resource, tree, local);
        checkResultSchema(resource.result?.schema, tree, reporter);
      } else if (resource.kind === 'schedule') checkScheduleInputs(resource, tree, local);
      else if (resource.kind === 'trigger') checkTriggerInputs(resource, tree, local);
    }

    // 6. The checks of the whole repo, and every diagnostic in the order compileRepo reports them.
    const cycles = createReporter();
    checkAgentCycles({ ...ctx, reporter: cycles });
    const secrets = createReporter();
    checkSecrets({ ...ctx, reporter: secrets });

    const all: Diagnostic[] = [...layout.sources];
    const add = (list: readonly Diagnostic[] | undefined) => {
      if (list && list.length > 0) all.push(...list);
    };
    const jsonPaths = new Set<string>();
    const invalid = new Map<string, Diagnostic>();
    for (const entry of entries) {
      const { own, json } = result(entry);
      add(own);
      if (json.size === 0) continue;
      for (const [path, jsonText] of json) {
        jsonPaths.add(path);
        const bad = jsonText === undefined ? undefined : this.jsons.get(path)?.invalid;
        if (bad && !invalid.has(path)) invalid.set(path, bad);
      }
    }
    for (const path of [...this.jsons.keys()]) if (!jsonPaths.has(path)) this.jsons.delete(path);
    all.push(...invalid.values());
    for (const entry of entries) add(this.refs.get(entry.file));
    for (const entry of built['auth-provider']) add(result(entry).connector);
    for (const entry of built.connector) add(result(entry).connector);
    for (const entry of built.tool) add(this.late.get(entry.file)?.diagnostics);
    for (const entry of built.agent) add(this.late.get(entry.file)?.diagnostics);
    add(cycles.diagnostics);
    for (const entry of built.interaction) add(this.late.get(entry.file)?.diagnostics);
    for (const entry of built.schedule) add(result(entry).connector);
    for (const entry of built.schedule) add(this.late.get(entry.file)?.diagnostics);
    for (const entry of built.trigger) add(result(entry).connector);
    for (const entry of built.trigger) add(this.late.get(entry.file)?.diagnostics);
    add(secrets.diagnostics);

    const definitions = new Map<string, ToolDefinition>();
    for (const entry of built.tool) {
      const definition = this.late.get(entry.file)?.definition;
      if (definition) definitions.set(entry.name, definition);
    }
    this.checked = [...dirty].filter((file) => layout.byFile.has(file)).sort();
    this.jsonPaths = jsonPaths;
    const diagnostics = sortDiagnostics(all);
    return {
      ok: !diagnostics.some((d) => d.severity === 'error'),
      diagnostics,
      authProviders: [...ctx.authProviders.values()].map((b) => b.resource),
      connectors: [...ctx.connectors.values()].map((b) => b.resource),
      tools: [...ctx.tools.values()].map((b) => b.resource),
      agents: [...ctx.agents.values()].map((b) => b.resource),
      interactions: [...ctx.interactions.values()].map((b) => b.resource),
      schedules: [...ctx.schedules.values()].map((b) => b.resource),
      triggers: [...ctx.triggers.values()].map((b) => b.resource),
      sources: entries.map(({ kind, name, file }) => ({ kind, name, file })),
      definitions,
    };
  }
}

function crashed(files: readonly RepoFile[], error: unknown): CompiledRepo {
  const reporter = createReporter();
  const detail = error instanceof Error ? error.message : String(error);
  reporter.report('mtr:compiler:crashed', { detail }, files[0]?.path ?? '', undefined);
  return {
    ok: false,
    diagnostics: reporter.diagnostics,
    authProviders: [],
    connectors: [],
    tools: [],
    agents: [],
    interactions: [],
    schedules: [],
    triggers: [],
    sources: [],
    definitions: new Map(),
  };
}

/** Puts a built resource into the context's map of its kind. */
function setBuilt(ctx: CompileContext, resource: Resource, tree: Built<Resource>['tree']): void {
  const map = {
    'auth-provider': ctx.authProviders,
    connector: ctx.connectors,
    tool: ctx.tools,
    agent: ctx.agents,
    interaction: ctx.interactions,
    schedule: ctx.schedules,
    trigger: ctx.triggers,
  }[resource.kind] as Map<string, Built<Resource>>;
  map.set(resource.name, { resource, tree });
}

/**
 * Compiles a config repo: parses every `.mtr` file, builds and checks its resources, resolves references,
 * runs the cross-resource checks and computes each tool's model-facing definition. Reports every problem of
 * the repo in one pass and never throws.
 */
export function compileRepo(files: RepoFile[], options: CompileOptions = {}): CompiledRepo {
  return new RepoChecker(options).check(files);
}
