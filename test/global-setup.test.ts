import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// issue #22: without PostgreSQL the suite says so once (test/global-setup.ts), instead of ECONNREFUSED per file.
const root = fileURLToPath(new URL('../', import.meta.url));

describe('the test suite without PostgreSQL', () => {
  it('stops before any file with one message naming the address and MT_TEST_PG_URL', async () => {
    // Nothing listens on port 1 of 127.0.0.1 (a privileged port no test opens).
    const url = 'postgres://postgres@127.0.0.1:1/postgres';
    const res = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        process.execPath,
        ['node_modules/vitest/vitest.mjs', 'run', 'test/config-docs.test.ts', 'packages/sdk/test/errors.test.ts'],
        { cwd: root, env: { ...process.env, MT_TEST_PG_URL: url }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, out: stdout + stderr }),
      );
    });
    expect(res.code).toBe(1);
    const lines = res.out.split('\n').filter((line) => line.includes('ECONNREFUSED'));
    expect(lines).toEqual([
      `The tests need a PostgreSQL server (15 or newer) and could not connect to ${url} (ECONNREFUSED). ` +
        'Start one there (for example `docker run -d -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`), ' +
        'or point MT_TEST_PG_URL at one whose user may create databases (README.md, Tests).',
    ]);
    // No file ran.
    expect(res.out).not.toMatch(/✓|×|Test Files/);
  });
});
