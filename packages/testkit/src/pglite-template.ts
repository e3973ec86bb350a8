import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

const require = createRequire(import.meta.url);
let making: Promise<string> | undefined;

function pgliteVersion(): string {
  const main = require.resolve('@electric-sql/pglite');
  return JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')).version as string;
}

async function makeTemplate(): Promise<string> {
  const template = join(tmpdir(), `mt-pglite-template-${pgliteVersion()}`);
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  // Made aside, then renamed into place at once: a reader never sees a half-made template.
  const aside = await mkdtemp(join(tmpdir(), 'mt-pglite-making-'));
  const pglite = await PGlite.create(aside);
  await pglite.close();
  try {
    await rename(aside, template);
  } catch {
    // Another test process made it first.
    await rm(aside, { recursive: true, force: true });
  }
  return template;
}

/**
 * The folder of an empty PGlite database (initdb done, no tables), made once per machine and PGlite version in
 * the temporary folder: a new PGlite database runs initdb, ~6 s of CPU (25-30 s on a loaded machine), while a
 * copy of this folder opens in about a second. Never open it itself: copy it with {@link copyPgliteTemplate}.
 */
export function pgliteTemplate(): Promise<string> {
  making ??= makeTemplate().catch((error: unknown) => {
    making = undefined;
    throw error;
  });
  return making;
}

/**
 * Copies the empty PGlite database of {@link pgliteTemplate} into `dir` (made when missing), so that PGlite, or
 * `mt serve --data D` with `dir` = `D/pglite`, opens it without initdb.
 */
export async function copyPgliteTemplate(dir: string): Promise<void> {
  const template = await pgliteTemplate();
  await mkdir(dir, { recursive: true });
  await cp(template, dir, { recursive: true });
}
