import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { normaliseJsonPath, type RepoFile, TOP_FOLDERS } from '../config/repo-layout.js';

const SKIPPED = new Set(['node_modules', '.git', 'dist', 'packages']);
const JSON_DIRECTIVE = /@json\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)/g;

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

function jsonPaths(content: string): string[] {
  const out: string[] = [];
  for (const match of content.matchAll(JSON_DIRECTIVE)) {
    let path: string;
    try {
      path = JSON.parse(`"${match[1]}"`) as string;
    } catch {
      continue;
    }
    const normal = normaliseJsonPath(path);
    if (normal.ok) out.push(normal.path);
  }
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
  for (const content of [...files.values()]) {
    for (const path of jsonPaths(content)) {
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
