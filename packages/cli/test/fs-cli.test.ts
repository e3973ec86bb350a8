import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Maitento } from '@maitento/sdk';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runMt, type ServeProcess, startServer, tempHome } from '../../../test/e2e/support/harness.js';

// The real `mt` and the SDK against a real `mt serve` on PostgreSQL: file systems and their files, text and binary.
const ADMIN_KEY = `mt_cli_fs_${randomBytes(16).toString('hex')}`;
let db: TestDatabase;
let home: string;
let work: string;
let server: ServeProcess;

function mt(args: string[], input?: string) {
  return runMt(args, { home, input, env: { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY } });
}

beforeAll(async () => {
  requireBuiltCli();
  db = await createTestDatabase('mt_cli_fs', { migrated: true });
  home = await tempHome();
  work = await mkdtemp(join(tmpdir(), 'mt-cli-fs-'));
  server = await startServer(db.url, ADMIN_KEY, home);
});

afterAll(async () => {
  await server?.stop();
  await db?.drop();
  for (const dir of [home, work]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('mt fs-create, fs-put, fs-ls and fs-get', { timeout: 120_000 }, () => {
  it('keep text and binary files by path, found by the file system name or id', async () => {
    const created = await mt(['fs-create', 'team-notes', '--description', 'Notes of the team']);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const binary = Buffer.from([0, 1, 2, 0xfe, 0xff, 0x0a, 0x0d, 0x80]);
    const local = join(work, 'blob.bin');
    await writeFile(local, binary);
    const putBinary = await mt(['fs-put', 'team-notes', 'data/blob.bin', local]);
    expect(putBinary.code, putBinary.stderr).toBe(0);
    const etag = putBinary.stdout.trim();
    expect(etag).toMatch(/^".+"$/);
    const putText = await mt(['fs-put', id, 'notes/today.md', '--content-type', 'text/markdown'], '# Today\n');
    expect(putText.code, putText.stderr).toBe(0);

    const listed = await mt(['fs-ls', 'team-notes', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ path: 'data/blob.bin', size: 8, etag }),
      expect.objectContaining({ path: 'notes/today.md', size: 8, contentType: 'text/markdown' }),
    ]);
    const notes = await mt(['fs-ls', 'team-notes', '--prefix', 'notes/']);
    expect(notes.stdout).toContain('notes/today.md');
    expect(notes.stdout).not.toContain('blob.bin');
    const systems = JSON.parse((await mt(['fs-ls', '--json'])).stdout);
    expect(systems).toEqual([expect.objectContaining({ id, name: 'team-notes', files: 2, bytes: 16 })]);

    const text = await mt(['fs-get', 'team-notes', 'notes/today.md']);
    expect([text.code, text.stdout]).toEqual([0, '# Today\n']);
    const out = join(work, 'back.bin');
    const got = await mt(['fs-get', id, 'data/blob.bin', '-o', out]);
    expect(got.code, got.stderr).toBe(0);
    expect((await readFile(out)).equals(binary)).toBe(true);
  });

  it('refuse a stale ETag, a .. path and an unknown file system, with their codes and exit 1', async () => {
    await mt(['fs-create', 'guarded']);
    const first = (await mt(['fs-put', 'guarded', 'doc.txt'], 'one')).stdout.trim();
    expect((await mt(['fs-put', 'guarded', 'doc.txt', '--if-match', first], 'two')).code).toBe(0);
    const stale = await mt(['fs-put', 'guarded', 'doc.txt', '--if-match', first, '--json'], 'three');
    expect(stale.code).toBe(1);
    expect(JSON.parse(stale.stdout).code).toBe('api:files:precondition-failed');
    const outside = await mt(['fs-put', 'guarded', '../outside.txt'], 'x');
    expect([outside.code, outside.stderr]).toEqual([1, expect.stringContaining('api:files:path-invalid')]);
    const unknown = await mt(['fs-ls', 'no-such-fs']);
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('api:cli:file-system-not-found')]);
    expect((await mt(['fs-get', 'guarded', 'doc.txt'])).stdout).toBe('two');
  });
});

describe('mt.fileSystems', { timeout: 60_000 }, () => {
  it('writes, reads, lists page by page, moves and deletes files, bytes unchanged', async () => {
    const client = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
    const fs = await client.fileSystems.create({ name: 'sdk-files' });
    const bytes = new Uint8Array(256).map((_, i) => i);
    const written = await client.fileSystems.write(fs.id, 'bin/all-bytes', bytes);
    expect(written).toMatchObject({ path: 'bin/all-bytes', size: 256, contentType: 'application/octet-stream' });
    const read = await client.fileSystems.read(fs.id, 'bin/all-bytes');
    expect(Buffer.from(read.content).equals(Buffer.from(bytes))).toBe(true);
    expect(read.etag).toBe(written.etag);
    await client.fileSystems.writeText(fs.id, { path: 'notes/a.md', content: 'ä note' });
    expect((await client.fileSystems.read(fs.id, 'notes/a.md')).text()).toBe('ä note');
    for (const n of [1, 2, 3]) await client.fileSystems.write(fs.id, `notes/n${n}.md`, `note ${n}`);
    const first = await client.fileSystems.listFiles(fs.id, { prefix: 'notes/', limit: 2 });
    expect(first.files).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const all = [];
    for await (const file of client.fileSystems.iterFiles(fs.id, { prefix: 'notes/', limit: 2 })) all.push(file.path);
    expect(all).toEqual(['notes/a.md', 'notes/n1.md', 'notes/n2.md', 'notes/n3.md']);
    await expect(client.fileSystems.write(fs.id, 'notes/n1.md', 'x', { ifMatch: '"stale"' })).rejects.toMatchObject({
      code: 'api:files:precondition-failed',
      status: 412,
    });
    const moved = await client.fileSystems.move(fs.id, { from: 'notes/n1.md', to: 'archive/n1.md' });
    expect(moved.path).toBe('archive/n1.md');
    await client.fileSystems.deleteFile(fs.id, 'archive/n1.md');
    await expect(client.fileSystems.read(fs.id, 'archive/n1.md')).rejects.toMatchObject({
      code: 'api:files:not-found',
    });
    expect(await client.fileSystems.get(fs.id)).toMatchObject({ files: 4 });
    await client.fileSystems.delete(fs.id);
    await expect(client.fileSystems.get(fs.id)).rejects.toMatchObject({ code: 'api:file-systems:not-found' });
  });
});
