import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { GeneratedFile } from './generate.js';
import { mergeFile } from './merge.js';

/** What `.mt-import/<name>.json` keeps of an import, to merge the next one against. */
export interface ImportRecord {
  source: string;
  sha256: string;
  flags: Record<string, unknown>;
  /** Each generated file's text as the import wrote it, by path relative to the repo root. */
  files: Record<string, string>;
}

export const recordPath = (name: string) => `.mt-import/${name}.json`;

/** One change an import makes (or would make) to a file. */
export interface FileChange {
  path: string;
  action: 'create' | 'update' | 'merge' | 'delete' | 'conflict' | 'keep-edited' | 'force';
  before?: string;
  after?: string;
  /** For a conflict: the properties both sides changed. */
  conflicts?: string[];
}

export interface Plan {
  changes: FileChange[];
  unchanged: number;
  /** Files of operations the document dropped that were edited by hand: left in place. */
  keptDropped: string[];
}

// The files are many and small (two per operation): synchronous calls cost a fraction of the promise API's three
// thread-pool round trips per file (open, read or write, close), and a missing file is no thrown error.
async function readOptional(path: string): Promise<string | undefined> {
  if (statSync(path, { throwIfNoEntry: false }) === undefined) return undefined;
  return readFileSync(path, 'utf8');
}

export async function readRecord(out: string, name: string): Promise<ImportRecord | undefined> {
  const text = await readOptional(join(out, recordPath(name)));
  return text === undefined ? undefined : (JSON.parse(text) as ImportRecord);
}

/** What importing `files` into `out` changes, given the last import's record (three-way, per property). */
export async function planImport(
  out: string,
  files: GeneratedFile[],
  record: ImportRecord | undefined,
  force: boolean,
): Promise<Plan> {
  const changes: FileChange[] = [];
  let unchanged = 0;
  for (const file of files) {
    const before = await readOptional(join(out, file.path));
    const base = record?.files[file.path];
    if (before === file.text) {
      unchanged++;
    } else if (before === undefined) {
      changes.push({ path: file.path, action: 'create', after: file.text });
    } else if (base !== undefined && before === base) {
      changes.push({ path: file.path, action: 'update', before, after: file.text });
    } else if (base !== undefined && file.text === base) {
      unchanged++; // edited by hand, unchanged upstream: the edit stays
    } else {
      const merged =
        base === undefined ? { conflicts: ['(no record of a previous import)'] } : mergeFile(base, before, file.text);
      if ('text' in merged) {
        if (merged.text === before) unchanged++;
        else changes.push({ path: file.path, action: 'merge', before, after: merged.text });
      } else if (force) {
        changes.push({ path: file.path, action: 'force', before, after: file.text });
      } else {
        changes.push({ path: file.path, action: 'conflict', before, after: file.text, conflicts: merged.conflicts });
      }
    }
  }
  const keptDropped: string[] = [];
  const generated = new Set(files.map((f) => f.path));
  for (const [path, base] of Object.entries(record?.files ?? {})) {
    if (generated.has(path)) continue;
    const before = await readOptional(join(out, path));
    if (before === undefined) continue;
    if (before === base || force) changes.push({ path, action: 'delete', before });
    else keptDropped.push(path);
  }
  changes.sort((a, b) => a.path.localeCompare(b.path));
  return { changes, unchanged, keptDropped };
}

/** A unified diff of one change. */
export function unifiedDiff(change: FileChange): string {
  return createTwoFilesPatch(
    change.before === undefined ? '/dev/null' : `a/${change.path}`,
    change.after === undefined ? '/dev/null' : `b/${change.path}`,
    change.before ?? '',
    change.after ?? '',
    undefined,
    undefined,
    { context: 3 },
  );
}

/**
 * Writes the plan's changes (never a conflict's) and the record: the generated texts, so the next import merges
 * against what this one produced.
 */
export async function applyPlan(
  out: string,
  plan: Plan,
  files: GeneratedFile[],
  record: Omit<ImportRecord, 'files'>,
  name: string,
): Promise<void> {
  const made = new Set<string>();
  const folder = (path: string) => {
    const dir = dirname(path);
    if (!made.has(dir)) mkdirSync(dir, { recursive: true });
    made.add(dir);
  };
  for (const change of plan.changes) {
    const path = join(out, change.path);
    if (change.action === 'delete') rmSync(path, { force: true });
    else if (change.after !== undefined && change.action !== 'conflict') {
      folder(path);
      writeFileSync(path, change.after, 'utf8');
    }
  }
  const full: ImportRecord = { ...record, files: Object.fromEntries(files.map((f) => [f.path, f.text])) };
  const target = join(out, recordPath(name));
  folder(target);
  writeFileSync(target, `${JSON.stringify(full, null, 2)}\n`, 'utf8');
}
