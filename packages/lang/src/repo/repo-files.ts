import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { TOP_FOLDERS } from '../config/repo-layout.js';

/**
 * Folders never walked into, at any depth: other tools' (dependencies, version control), never resources. Every
 * other folder under a resource folder is read, so a misplaced `.mtr` file is reported (`mtr:repo:unknown-folder`)
 * rather than skipped.
 */
export const SKIPPED_FOLDERS: ReadonlySet<string> = new Set(['node_modules', '.git']);

/** The file kinds of a config repo: resources, and the JSON files `@json` names. */
const REPO_EXTENSIONS = ['.mtr', '.json'] as const;

async function walk(root: string, dir: string, extensions: readonly string[], out: string[]): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    // A resource folder that is not there, or is a file, holds nothing.
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    throw error;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    // Symbolic links are not followed (Dirent tells them apart), so a link loop cannot trap the walk.
    if (entry.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(entry.name)) await walk(root, path, extensions, out);
    } else if (entry.isFile() && extensions.some((ext) => entry.name.endsWith(ext))) {
      out.push(relative(root, path).split(sep).join('/'));
    }
  }
}

/**
 * True when `dir` is a config repo: a folder holding at least one of the resource folders (`connectors/`,
 * `external-operations/`, `agents/`, `interactions/`). The one rule `mt check`, `mt deploy` and `mt fmt` use.
 */
export async function isConfigRepo(dir: string): Promise<boolean> {
  const found = await Promise.all(
    TOP_FOLDERS.map(async (name) => (await stat(join(dir, name)).catch(() => undefined))?.isDirectory() === true),
  );
  return found.includes(true);
}

/**
 * The files of the config repo at `dir`, as `mt check` reads them and `mt fmt` formats them: every file ending in
 * one of `extensions` under the resource folders (`connectors/`, `external-operations/`, `agents/`,
 * `interactions/`) at any depth, except in {@link SKIPPED_FOLDERS}. The repo's other top-level folders
 * (`packages/`, `docs/`, ...) are not part of it. Paths are relative to `dir`, with `/`, sorted.
 */
export async function configRepoFiles(dir: string, extensions: readonly string[] = REPO_EXTENSIONS): Promise<string[]> {
  const paths: string[] = [];
  for (const top of TOP_FOLDERS) await walk(dir, join(dir, top), extensions, paths);
  return paths.sort();
}

/** Every file ending in one of `extensions` under `dir`, except in {@link SKIPPED_FOLDERS}; relative to `dir`, sorted. */
export async function filesUnder(dir: string, extensions: readonly string[]): Promise<string[]> {
  const paths: string[] = [];
  await walk(dir, dir, extensions, paths);
  return paths.sort();
}
