import { createEgressPolicy, type EgressPolicy } from '@maitento/egress';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { parseMtr } from '../syntax/parse.js';
import { checkConnectorAddress } from './address-check.js';
import { checkAgent, checkAgentCycles } from './agent-checks.js';
import { buildResource } from './build-resources.js';
import type { Built, CompileContext } from './compile-context.js';
import { checkConnector } from './connector-checks.js';
import { checkInteraction } from './interaction-checks.js';
import { checkRemoteSchema, checkResultSchema, checkSchema } from './json-schema-check.js';
import { CONVERSATION_SHAPE, KIND_SHAPES, MCP_CONNECTOR_SHAPE } from './kind-shapes.js';
import { type NameIndex, resolveReferences } from './references.js';
import { classifyPath, createJsonLoader, isKebabCase, type RepoFile, toKebabCase } from './repo-layout.js';
import { createReporter, type Reporter, sortDiagnostics } from './report.js';
import type {
  Agent,
  Connector,
  Interaction,
  RemoteTool,
  Resource,
  ResourceKind,
  Tool,
  ToolDefinition,
} from './resources.js';
import { checkSecrets } from './secret-checks.js';
import { checkShape, type FoundRef } from './shape.js';
import { checkTool } from './tool-checks.js';
import { toolDefinition } from './tool-definition.js';
import { buildTree, type ValueTree } from './value-tree.js';

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
  connectors: Connector[];
  tools: Tool[];
  agents: Agent[];
  interactions: Interaction[];
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
  tree?: ValueTree;
  refs: FoundRef[];
  resource?: Resource;
}

function normalisePath(path: string): string {
  return path.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
}

function errorCount(reporter: Reporter): number {
  let n = 0;
  for (const d of reporter.diagnostics) if (d.severity === 'error') n++;
  return n;
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
    const entry: Entry = { ...place, file, refs: [] };
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

function compile(files: readonly RepoFile[], options: CompileOptions): CompiledRepo {
  const reporter = createReporter();
  const { entries, texts } = readSources(files, reporter);
  const loadJson = createJsonLoader(texts, reporter);

  for (const entry of entries) {
    const before = errorCount(reporter);
    const text = texts.get(entry.file) ?? '';
    const parsed = parseMtr(text, entry.file);
    reporter.diagnostics.push(...parsed.diagnostics);
    entry.tree = buildTree(parsed.ast, reporter, loadJson, () => parseMtr(text, entry.file).ast);
    const shape = entry.mcp ? MCP_CONNECTOR_SHAPE : entry.conversation ? CONVERSATION_SHAPE : KIND_SHAPES[entry.kind];
    checkShape(entry.tree, shape, reporter, entry.refs);
    if (errorCount(reporter) === before) {
      const mcp = entry.mcp ? { remote: options.remoteTools?.get(entry.name) } : undefined;
      entry.resource = buildResource(entry.kind, entry.name, entry.tree.root, mcp, entry.conversation);
    }
  }

  const names: NameIndex = {
    connector: new Set(entries.filter((e) => e.kind === 'connector').map((e) => e.name)),
    tool: new Set(entries.filter((e) => e.kind === 'tool').map((e) => e.name)),
    agent: new Set(entries.filter((e) => e.kind === 'agent').map((e) => e.name)),
    interaction: new Set(entries.filter((e) => e.kind === 'interaction').map((e) => e.name)),
  };
  const ctx: CompileContext = {
    reporter,
    connectors: new Map(),
    tools: new Map(),
    agents: new Map(),
    interactions: new Map(),
  };
  for (const entry of entries) {
    resolveReferences(entry.file, entry.refs, names, options.knownSecrets, reporter);
    const { resource, tree } = entry;
    if (!resource || !tree) continue;
    const map = { connector: ctx.connectors, tool: ctx.tools, agent: ctx.agents, interaction: ctx.interactions }[
      resource.kind
    ] as Map<string, Built<Resource>>;
    map.set(resource.name, { resource, tree });
  }

  const policy = options.egress ?? createEgressPolicy();
  for (const { resource, tree } of ctx.connectors.values()) {
    const before = errorCount(reporter);
    checkConnector(resource, tree, reporter);
    if (resource.mcp !== undefined) checkRemoteSchema(resource, tree, reporter);
    else {
      checkSchema(resource.schema.request, ['schema', 'request'], tree, reporter);
      checkSchema(resource.schema.response, ['schema', 'response'], tree, reporter);
    }
    if (errorCount(reporter) === before) {
      checkConnectorAddress(resource, tree, reporter, policy, options.platformOrigin);
    }
  }
  for (const { resource, tree } of ctx.tools.values()) checkTool(resource, tree, ctx);
  for (const { resource, tree } of ctx.agents.values()) checkAgent(resource, tree, ctx);
  checkAgentCycles(ctx);
  for (const { resource, tree } of ctx.interactions.values()) {
    checkInteraction(resource, tree, ctx);
    checkResultSchema(resource.result?.schema, tree, reporter);
  }
  checkSecrets(ctx);

  const definitions = new Map<string, ToolDefinition>();
  for (const { resource: tool } of ctx.tools.values()) {
    const connector = ctx.connectors.get(tool.connector)?.resource;
    if (connector) definitions.set(tool.name, toolDefinition(tool, connector));
  }
  const diagnostics = sortDiagnostics(reporter.diagnostics);
  return {
    ok: !diagnostics.some((d) => d.severity === 'error'),
    diagnostics,
    connectors: [...ctx.connectors.values()].map((b) => b.resource),
    tools: [...ctx.tools.values()].map((b) => b.resource),
    agents: [...ctx.agents.values()].map((b) => b.resource),
    interactions: [...ctx.interactions.values()].map((b) => b.resource),
    sources: entries.map(({ kind, name, file }) => ({ kind, name, file })),
    definitions,
  };
}

/**
 * Compiles a config repo: parses every `.mtr` file, builds and checks its resources, resolves references,
 * runs the cross-resource checks and computes each tool's model-facing definition. Reports every problem of
 * the repo in one pass and never throws.
 */
export function compileRepo(files: RepoFile[], options: CompileOptions = {}): CompiledRepo {
  try {
    return compile(files, options);
  } catch (error) {
    const reporter = createReporter();
    const detail = error instanceof Error ? error.message : String(error);
    reporter.report('mtr:compiler:crashed', { detail }, files[0]?.path ?? '', undefined);
    return {
      ok: false,
      diagnostics: reporter.diagnostics,
      connectors: [],
      tools: [],
      agents: [],
      interactions: [],
      sources: [],
      definitions: new Map(),
    };
  }
}
