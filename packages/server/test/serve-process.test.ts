import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyPgliteTemplate, createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleFiles } from './helpers.js';

// The real `mt` executable, which runs the built CLI (`npx tsc -b` first; `npm test` does it).
const MT = fileURLToPath(new URL('../../../node_modules/.bin/mt', import.meta.url));
const dirs: string[] = [];

function serve(args: string[], env: Record<string, string | undefined>) {
  const child = spawn(MT, ['serve', ...args], {
    // No load balancer to tell: SIGTERM closes the listener at once.
    env: {
      ...process.env,
      DATABASE_URL: '',
      MT_SECRET_KEY: '',
      MT_BOOTSTRAP_KEY: '',
      MT_SHUTDOWN_UNREADY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line:\n${stderr}`)), 40_000);
    child.stderr.on('data', () => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      reject(new Error(`exited before listening:\n${stderr}`));
    });
  });
  // A test that expects the process to exit early never awaits this; keep that rejection handled.
  listening.catch(() => {});
  return { child, exited, listening, output: () => ({ stderr, stdout }) };
}

function stop(child: ChildProcess) {
  if (child.exitCode === null) child.kill('SIGTERM');
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// The two tests share nothing (a PGlite folder of its own; a database of its own): they run side by side, each
// waiting on its own `mt serve`.
describe('mt serve', { concurrent: true }, () => {
  it('starts on PGlite with --port 0, serves the API with the bootstrap key, and stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mt-serve-'));
    dirs.push(dir);
    // An empty PGlite database already made (initdb skipped); test/e2e/pglite-serve.test.ts starts from nothing.
    await copyPgliteTemplate(join(dir, 'pglite'));
    const key = `mt_${randomBytes(24).toString('base64url')}`;
    const server = serve(['--port', '0', '--data', dir], { MT_BOOTSTRAP_KEY: key });
    try {
      const url = await server.listening;
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      await fetch(`${url}/v1/secrets`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'orders-key', value: 'serve-test-secret' }),
      });
      const res = await fetch(`${url}/v1/deploy`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ files: sampleFiles() }),
      });
      expect(res.status).toBe(200);
      expect((await res.json()).changes).toHaveLength(7);
      stop(server.child);
      expect(await server.exited).toBe(0);
      const { stderr, stdout } = server.output();
      expect(stderr).toMatch(/stopped/);
      expect(stderr).toMatch(/generated a secret key/);
      expect(stderr).not.toContain(key);
      expect(stderr + stdout).not.toContain('serve-test-secret');
    } finally {
      stop(server.child);
    }
  }, 60_000);

  it('refuses to start on PostgreSQL without MT_SECRET_KEY, with the code, exit 1', async () => {
    const database: TestDatabase = await createTestDatabase('mt_serve');
    try {
      const server = serve(['--port', '0'], { DATABASE_URL: database.url });
      expect(await server.exited).toBe(1);
      expect(server.output().stderr).toMatch(/api:secrets:key-missing/);
    } finally {
      await database.drop();
    }
  }, 60_000);
});
