import { resolve } from 'node:path';
import type { CompiledRepo, Diagnostic, RepoFile } from '@maitento/lang';
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

/**
 * Reads and compiles the config repo at `dir` with the egress policy of the environment
 * (`MT_EGRESS_ALLOW`) and the platform's URL (`MT_PUBLIC_URL`). The compiler is imported here, on first
 * use, so commands that only talk to a server start without loading it.
 */
export async function compileLocalRepo(dir: string): Promise<LocalRepo> {
  const [{ compileRepo, readConfigRepo }, { egressPolicyFromEnv }] = await Promise.all([
    import('@maitento/lang'),
    import('@maitento/egress'),
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
