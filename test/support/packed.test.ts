import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onceARun, RUN_DIR_ENV } from './packed.js';

// The once-a-run lock the packed install relies on (test/support/packed.ts), with a `make` of its own instead of
// npm: several callers at once, a maker that fails, a maker that stalls.
let saved: string | undefined;
let runDir: string;

beforeEach(async () => {
  saved = process.env[RUN_DIR_ENV];
  runDir = await mkdtemp(join(tmpdir(), 'mt-once-'));
  process.env[RUN_DIR_ENV] = runDir;
});

afterEach(async () => {
  if (saved === undefined) delete process.env[RUN_DIR_ENV];
  else process.env[RUN_DIR_ENV] = saved;
  await rm(runDir, { recursive: true, force: true });
});

describe('onceARun', () => {
  it('makes the folder once for callers at once; each gets it whole', async () => {
    let makes = 0;
    const make = async (folder: string) => {
      makes += 1;
      await new Promise((resolve) => setTimeout(resolve, 300));
      await writeFile(join(folder, 'made'), 'whole');
    };
    const folders = await Promise.all([1, 2, 3].map(() => onceARun('thing', make)));
    expect(makes).toBe(1);
    expect(new Set(folders)).toEqual(new Set([join(runDir, 'thing')]));
    expect(await readFile(join(runDir, 'thing', 'made'), 'utf8')).toBe('whole');
    // Asked again later, it is not made again.
    expect(await onceARun('thing', make)).toBe(join(runDir, 'thing'));
    expect(makes).toBe(1);
  });

  it("hands the maker's failure to a caller that waits, with its message", async () => {
    const maker = onceARun('broken', async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      throw new Error('npm said no');
    });
    const waiter = onceARun('broken', async () => {
      throw new Error('a waiter never makes it');
    });
    await expect(maker).rejects.toThrow('npm said no');
    await expect(waiter).rejects.toThrow(/broken failed in another test file:\nnpm said no/);
  });

  it('stops waiting on a maker that stalls at its deadline', async () => {
    const stalled = onceARun('stuck', () => new Promise<void>(() => {}));
    void stalled;
    const started = Date.now();
    await expect(onceARun('stuck', async () => {}, 500)).rejects.toThrow(
      'stuck, made by another test file, was not ready in 0.5 s',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });
});
