import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { normaliseJsonPath, type RepoFile, TOP_FOLDERS } from '../config/repo-layout.js';
import type { Assignment, ValueNode } from '../syntax/ast.js';
import { parseMtr } from '../syntax/parse.js';

const SKIPPED = new Set(['node_modules', '.git', 'dist', 'packages']);

function toRepoPath(root: string, absolute: string): string {
  return relative(root, absolute).split(sep).join('/');
}

async function walk(root: string, dir: string, out: string[]): Promise<void> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (SKIPPED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(root, path, out);
    else if (entry.isFile() && (entry.name.endsWith('.mtr') || entry.name.endsWith('.json'))) {
      out.push(toRepoPath(root, path));
    }
  }
}

function collectJson(value: ValueNode, out: string[]): void {
  if (value.kind === 'Directive') {
    // As the compiler reads it: one string argument (a trailing comma is allowed by the grammar).
    if (value.name !== 'json' || value.args.length !== 1) return;
    const normal = normaliseJsonPath(value.args[0].value);
    if (normal.ok) out.push(normal.path);
  } else if (value.kind === 'Array') for (const element of value.elements) collectJson(element, out);
  else if (value.kind === 'Object') collectAssignments(value.entries, out);
}

function collectAssignments(assignments: readonly Assignment[], out: string[]): void {
  for (const assignment of assignments) collectJson(assignment.value, out);
}

// The files the `@json` directives of one `.mtr` file name, found by the parser (every form the grammar
// allows: comments, new lines, a trailing comma); a file that names none is not parsed here.
function jsonPaths(path: string, content: string): string[] {
  if (!path.endsWith('.mtr') || !content.includes('@json')) return [];
  const out: string[] = [];
  collectAssignments(parseMtr(content, path).ast.assignments, out);
  return out;
}

/**
 * Reads a config repo from disk: every `.mtr` and `.json` file under `connectors/`, `external-operations/`,
 * `agents/` and `interactions/` (skipping node_modules, .git, dist and packages), plus every `.json` file an
 * `@json` names, with paths relative to `dir` and `/` between names, sorted.
 */
export async function readConfigRepo(dir: string): Promise<RepoFile[]> {
  const paths: string[] = [];
  for (const top of TOP_FOLDERS) await walk(dir, join(dir, top), paths);
  const files = new Map<string, string>();
  for (const path of paths) files.set(path, await readFile(join(dir, ...path.split('/')), 'utf8'));
  for (const [file, content] of [...files.entries()]) {
    for (const path of jsonPaths(file, content)) {
      if (files.has(path)) continue;
      try {
        files.set(path, await readFile(join(dir, ...path.split('/')), 'utf8'));
      } catch {
        // A missing file is reported by the compiler at the @json that names it.
      }
    }
  }
  return [...files.keys()].sort().map((path) => ({ path, content: files.get(path) ?? '' }));
}
