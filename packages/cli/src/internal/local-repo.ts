import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CompiledRepo, Diagnostic, RepoFile } from '@maitento/lang';
import { cliErrors } from '../errors.js';
import type { Io } from './output.js';

/** A config repo on disk, compiled the way `mt check`, `mt deploy` and `mt extop-call` all see it. */
export interface LocalRepo {
  root: string;
  files: RepoFile[];
  /** File text by repo-relative path, for printing diagnostics with their source line. */
  sources: Map<string, string>;
  compiled: CompiledRepo;
  /** The diagnostics of severity `error`. */
  errors: Diagnostic[];
}

async function isFolder(path: string): Promise<boolean | undefined> {
  const found = await stat(path).catch(() => undefined);
  return found === undefined ? undefined : found.isDirectory();
}

/**
 * Throws `api:cli:not-a-config-repo` unless `dir` is a folder holding at least one resource folder, so a
 * wrong path (a typo, a file) fails instead of passing as an empty repo.
 */
export async function assertConfigRepo(dir: string): Promise<void> {
  const root = resolve(dir);
  const folder = await isFolder(root);
  let reason: string | undefined;
  if (folder === undefined) reason = 'nothing is there';
  else if (!folder) reason = 'it is a file, not a folder';
  else {
    const { isConfigRepo, TOP_FOLDERS } = await import('@maitento/lang');
    if (!(await isConfigRepo(root)))
      reason = `it has none of the folders ${TOP_FOLDERS.map((f) => `${f}/`).join(', ')}`;
  }
  if (reason !== undefined) throw cliErrors.create('api:cli:not-a-config-repo', { dir, reason });
}

/**
 * Reads and compiles the config repo at `dir` with the egress policy of the environment
 * (`MT_EGRESS_ALLOW`) and the platform's URL (`MT_PUBLIC_URL`). The compiler is imported here, on first
 * use, so commands that only talk to a server start without loading it. Throws `api:cli:not-a-config-repo`
 * when `dir` is not a config repo.
 */
export async function compileLocalRepo(dir: string): Promise<LocalRepo> {
  await assertConfigRepo(dir);
  const [{ compileRepo, readConfigRepo }, { egressPolicyFromEnv }] = await Promise.all([
    import('@maitento/lang'),
    import('@maitento/egress/static'),
  ]);
  const root = resolve(dir);
  const egress = egressPolicyFromEnv(process.env);
  const files = await readConfigRepo(root);
  const compiled = compileRepo(files, { egress, platformOrigin: process.env.MT_PUBLIC_URL?.trim() || undefined });
  return {
    root,
    files,
    sources: new Map(files.map((f) => [f.path, f.content])),
    compiled,
    errors: compiled.diagnostics.filter((d) => d.severity === 'error'),
  };
}

/** Prints diagnostics compiler-style on stderr, each with its source line and a caret. */
export async function printDiagnostics(io: Io, diagnostics: Diagnostic[], sources: Map<string, string>): Promise<void> {
  if (diagnostics.length === 0) return;
  const { formatDiagnostic } = await import('@maitento/lang');
  for (const diagnostic of diagnostics) io.err(formatDiagnostic(diagnostic, sources.get(diagnostic.file) ?? ''));
}
