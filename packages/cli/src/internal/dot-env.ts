import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseEnv } from 'node:util';

/** The nearest `.env`: in `dir`, else in the closest folder above it that has one; undefined when none has. */
export function nearestDotEnv(dir: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, '.env'))) return join(at, '.env');
    if (dirname(at) === at) return undefined;
  }
}

/**
 * Reads the nearest `.env` file from `dir` (the folder `mt` runs in) up, into `env`, so that `mt serve`, `mt worker` and every
 * other command run in that folder or below it share its settings without exports carried between terminals (issue
 * #45). A variable the environment already has (not empty) keeps its value: the environment wins over the file, and
 * the file over the defaults (docs/configuration.md). No file, nothing read; a file that cannot be read is said in one line on stderr, and
 * the command goes on with the environment alone. Answers the names it set.
 */
export function loadDotEnv(
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): string[] {
  const file = nearestDotEnv(dir);
  if (file === undefined) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      warn(`mt: ${file} was not read (${(error as Error).message}); going on without it`);
    }
    return [];
  }
  const set: string[] = [];
  for (const [name, value] of Object.entries(parseEnv(text))) {
    // An empty value counts as unset everywhere (docs/configuration.md): the file's fills it.
    if (env[name] !== undefined && env[name] !== '') continue;
    env[name] = value;
    set.push(name);
  }
  return set;
}
