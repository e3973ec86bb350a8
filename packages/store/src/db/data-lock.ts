import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { storeErrors } from '../errors.js';

// Lock files this process holds, so a second open in the same process is refused too.
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function owner(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock of an embedded data folder (`<dir>.lock`, holding the pid) and returns its release:
 * two processes writing one PGlite folder would corrupt it. A lock left by a process that no longer
 * runs is taken over; a live holder is `api:store:data-locked`.
 */
export function lockDataDir(dir: string): () => void {
  const file = `${resolve(dir)}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      held.add(file);
      return () => {
        if (!held.delete(file)) return;
        try {
          unlinkSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = owner(file);
      // An unreadable lock may be one being written this instant: treat it as held, never as stale.
      const stale = pid !== undefined && !held.has(file) && (pid === process.pid || !alive(pid));
      if (!stale) throw storeErrors.create('api:store:data-locked', { dir: resolve(dir), pid: pid ?? '?', file });
      unlinkSync(file);
    }
  }
  throw storeErrors.create('api:store:data-locked', { dir: resolve(dir), pid: owner(file) ?? '?', file });
}
