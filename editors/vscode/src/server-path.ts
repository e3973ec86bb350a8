import { existsSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Where the `mt` that serves `mt lsp --stdio` was found. */
export interface ServerCommand {
  command: string;
  from: 'workspace' | 'setting' | 'path';
}

function isFile(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The names `mt` has on disk on this platform (npm writes `mt.cmd` on Windows). */
function executableNames(platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? ['mt.cmd', 'mt.exe', 'mt'] : ['mt'];
}

/**
 * The `mt` to start: the workspace's own `node_modules/.bin/mt` (so diagnostics come from the compiler version
 * the repo deploys with), else the `maitento.server.path` setting, else `mt` on the `PATH`; undefined when none.
 */
export function findServer(
  folders: readonly string[],
  setting: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): ServerCommand | undefined {
  for (const folder of folders) {
    for (const name of executableNames(platform)) {
      const path = join(folder, 'node_modules', '.bin', name);
      if (isFile(path)) return { command: path, from: 'workspace' };
    }
  }
  if (setting?.trim()) return { command: setting.trim(), from: 'setting' };
  for (const dir of (env.PATH ?? env.Path ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const name of executableNames(platform)) {
      const path = join(dir, name);
      if (isFile(path)) return { command: path, from: 'path' };
    }
  }
  return undefined;
}
