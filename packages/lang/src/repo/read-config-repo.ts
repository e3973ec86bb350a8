import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { normaliseJsonPath, type RepoFile } from '../config/repo-layout.js';
import type { Assignment, ValueNode } from '../syntax/ast.js';
import { parseMtr } from '../syntax/parse.js';
import { configRepoFiles } from './repo-files.js';

/** How many files {@link readConfigRepo} reads at once. */
const READ_BATCH = 64;

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
 * Reads a config repo from disk: every `.mtr` and `.json` file of {@link configRepoFiles} (under `connectors/`,
 * `external-operations/`, `agents/` and `interactions/`, in no node_modules or .git), plus every `.json` file an
 * `@json` names, with paths relative to `dir` and `/` between names, sorted.
 */
export async function readConfigRepo(dir: string): Promise<RepoFile[]> {
  const paths = await configRepoFiles(dir);
  const files = new Map<string, string>();
  // A few reads at a time rather than one after another: a repo of a thousand files is read in one wait per batch.
  for (let i = 0; i < paths.length; i += READ_BATCH) {
    const batch = paths.slice(i, i + READ_BATCH);
    const texts = await Promise.all(batch.map((path) => readFile(join(dir, ...path.split('/')), 'utf8')));
    for (const [j, path] of batch.entries()) files.set(path, texts[j]);
  }
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
