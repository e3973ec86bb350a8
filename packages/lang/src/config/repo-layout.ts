import type { DeployFile } from '@maitento/sdk/wire';
import type { Span } from '../syntax/ast.js';
import { jsonErrorOffset } from './json-error-offset.js';
import type { Reporter } from './report.js';
import type { Json, ResourceKind } from './resources.js';
import type { JsonLoader } from './value-tree.js';

/** One file of a config repo: its path relative to the repo root (with `/`) and its text (what a deploy sends). */
export type RepoFile = DeployFile;

/** The folders each resource kind lives in: a connector to an HTTP endpoint or to a remote MCP server's tool. */
export const KIND_FOLDERS: Readonly<Record<ResourceKind, readonly string[]>> = {
  'auth-provider': ['auth-providers/'],
  schedule: ['schedules/'],
  trigger: ['triggers/'],
  connector: ['connectors/open-api/', 'connectors/mcp/'],
  tool: ['external-operations/open-api/'],
  agent: ['agents/'],
  interaction: ['interactions/one-shot/', 'interactions/conversation/'],
};

/** The folder of MCP connectors: each names one tool of a remote MCP server instead of an HTTP endpoint. */
export const MCP_CONNECTOR_FOLDER = 'connectors/mcp/';

/** The folder of conversation interactions: a run waits for the next message after each reply. */
export const CONVERSATION_FOLDER = 'interactions/conversation/';

/** The top-level folders of a config repo. */
export const TOP_FOLDERS = [
  'auth-providers',
  'connectors',
  'external-operations',
  'agents',
  'interactions',
  'schedules',
  'triggers',
] as const;

/** Where a `.mtr` file's resource comes from: its kind, its name, and whether it is an MCP connector. */
export interface ResourcePlace {
  kind: ResourceKind;
  name: string;
  /** True for a connector in `connectors/mcp/`. */
  mcp: boolean;
  /** True for an interaction in `interactions/conversation/`. */
  conversation: boolean;
}

/** The kind and name of a `.mtr` file from its path, or undefined when its folder holds no resources. */
export function classifyPath(path: string): ResourcePlace | undefined {
  if (!path.endsWith('.mtr')) return undefined;
  for (const [kind, folders] of Object.entries(KIND_FOLDERS) as [ResourceKind, readonly string[]][]) {
    for (const folder of folders) {
      if (!path.startsWith(folder)) continue;
      const rest = path.slice(folder.length, -'.mtr'.length);
      if (rest === '' || rest.includes('/')) return undefined;
      return { kind, name: rest, mcp: folder === MCP_CONNECTOR_FOLDER, conversation: folder === CONVERSATION_FOLDER };
    }
  }
  return undefined;
}

/** True when a resource name is lowercase kebab-case (`get-order`, `open-meteo-forecast`). */
export function isKebabCase(name: string): boolean {
  return /^[a-z0-9]+(-[a-z0-9]+)*$/.test(name);
}

/** The kebab-case form of a name, for the hint of a badly named file. */
export function toKebabCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
}

/** Normalises an `@json` path relative to the repo root; returns a reason when it is absolute or leaves the repo. */
export function normaliseJsonPath(path: string): { ok: true; path: string } | { ok: false; reason: string } {
  const slashed = path.replace(/\\/g, '/');
  if (slashed === '') return { ok: false, reason: 'names no file' };
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed)) {
    return { ok: false, reason: 'is an absolute path; only files of the config repo can be read' };
  }
  const out: string[] = [];
  for (const part of slashed.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return { ok: false, reason: 'leaves the config repo' };
      out.pop();
    } else out.push(part);
  }
  if (!out[out.length - 1]?.endsWith('.json')) return { ok: false, reason: 'does not name a .json file' };
  return { ok: true, path: out.join('/') };
}

function positionAt(text: string, offset: number): Span {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < clamped; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  const start = { offset: clamped, line, column: clamped - lineStart + 1 };
  const end = clamped < text.length && text.charCodeAt(clamped) !== 10 ? clamped + 1 : clamped;
  return { start, end: { offset: end, line, column: end - lineStart + 1 } };
}

/** Creates the `@json` loader of one compile: reads each file once, reports bad paths, missing files and bad JSON. */
export function createJsonLoader(files: ReadonlyMap<string, string>, reporter: Reporter): JsonLoader {
  const cache = new Map<string, Json | undefined>();
  return (path, from, span) => {
    const normal = normaliseJsonPath(path);
    if (!normal.ok) {
      reporter.report('mtr:json:path', { path, reason: normal.reason }, from, span);
      return undefined;
    }
    if (cache.has(normal.path)) return cache.get(normal.path);
    const text = files.get(normal.path);
    let value: Json | undefined;
    if (text === undefined) {
      reporter.report('mtr:json:not-found', { path }, from, span);
      return undefined;
    }
    try {
      value = JSON.parse(text) as Json;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const detail = message.replace(/ in JSON at position \d+.*$/s, '').replace(/, ".*" is not valid JSON$/s, '');
      reporter.report(
        'mtr:json:invalid',
        { path: normal.path, detail },
        normal.path,
        positionAt(text, jsonErrorOffset(text)),
      );
    }
    cache.set(normal.path, value);
    return value;
  };
}
