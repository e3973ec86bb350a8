import { writeFile } from 'node:fs/promises';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ROOT,
  requireBuiltCli,
  runMt,
  type ServeProcess,
  startServer,
  tempHome,
} from '../../../test/e2e/support/harness.js';

// The real `mt kb-*` against a real `mt serve`: names or ids, JSON, the progress over many files, and a bad file
// among good ones.
const ADMIN_KEY = `mt_cli_kb_${Date.now().toString(36)}_0123456789abcdef`;
const FIXTURES = join(ROOT, 'test/fixtures/handbook');
let db: TestDatabase;
let home: string;
let server: ServeProcess;

function mt(args: string[]) {
  return runMt(args, { home, env: { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY } });
}

beforeAll(async () => {
  requireBuiltCli();
  [db, home] = await Promise.all([createTestDatabase('mt_cli_kb', { migrated: true }), tempHome()]);
  server = await startServer(db.url, ADMIN_KEY, home);
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('mt kb-*', { timeout: 60_000 }, () => {
  it('creates a knowledge base, adds Markdown, PDF and HTML with progress, lists and searches it by name or id', async () => {
    const created = await mt(['kb-create', 'handbook', '--description', 'Staff handbook']);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const files = ['leave.md', 'expenses.pdf', 'equipment.html'].map((f) => join(FIXTURES, f));
    const added = await mt(['kb-add', 'handbook', ...files]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toMatch(/\[#+\.*\] 1\/3 leave\.md: 3 passages/);
    expect(added.stderr).toMatch(/\[#{24}\] 3\/3 equipment\.html: 2 passages/);
    expect(added.stderr).toContain('added 3 of 3 files to handbook');
    // The four reads side by side, each its own `mt` process.
    const [listed, table, found, text] = await Promise.all([
      mt(['kb-list', '--json']),
      mt(['kb-list']),
      mt(['kb-search', id, 'Is first class train travel refunded?', '--json']),
      mt(['kb-search', 'handbook', '"sick leave"', '--limit', '1']),
    ]);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id, name: 'handbook', documentCount: 3, chunkCount: 7 }),
    ]);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+LANGUAGE\s+DOCUMENTS\s+PASSAGES\s+CREATED\n/);
    expect(found.code, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout)[0]).toMatchObject({ document: { name: 'expenses.pdf' }, title: 'Page 1' });
    expect(text.stdout).toMatch(/^leave\.md > Leave > Sick leave \(#1, score \d+\.\d{3}\)\nTell your manager/);
  });

  it('tries every file, reports the bad ones with their codes, and exits 1', async () => {
    const broken = join(home, 'broken.pdf');
    await writeFile(broken, '%PDF-1.4 not really');
    const sheet = join(home, 'sheet.xlsx');
    await writeFile(sheet, 'x');
    const result = await mt(['kb-add', 'handbook', broken, sheet, join(FIXTURES, 'leave.md'), '--json']);
    expect(result.code).toBe(1);
    const out = JSON.parse(result.stdout);
    expect(out.added.map((d: { name: string }) => d.name)).toEqual(['leave.md']);
    expect(out.failed.map((f: { code: string }) => f.code)).toEqual([
      'api:knowledge:unreadable',
      'api:cli:kb-file-type',
    ]);
    expect(result.stderr).toContain('3/3');
  });

  it('exits 1 with api:cli:kb-not-found for a knowledge base that is not there', async () => {
    const result = await mt(['kb-search', 'no-such-kb', 'leave']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error [api:cli:kb-not-found]');
  });
});
