import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createFileSystem,
  createNamespace,
  createPgliteDb,
  type Db,
  deleteFile,
  deleteFileSystem,
  getFile,
  getFileSystem,
  listFiles,
  listFileSystems,
  migrate,
  moveFile,
  normalizeFilePath,
  putFile,
} from '@maitento/store';
import { copyPgliteTemplate } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenedBackend, openPostgres } from './backends.js';

// The same file-system store on PostgreSQL and on PGlite: bytea content, byte-order listing, one transaction
// per write with the limits checked under the file system's row lock.
const limits = { maxFileBytes: 64, maxFileSystemBytes: 100 };

async function openPglite(): Promise<OpenedBackend> {
  const dir = await mkdtemp(join(tmpdir(), 'mt-files-pglite-'));
  await copyPgliteTemplate(join(dir, 'db'));
  const db = await createPgliteDb(join(dir, 'db'));
  return {
    db,
    async done() {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe('file paths', () => {
  it('are normalised, and absolute, .. and empty paths are refused with a code', () => {
    expect(normalizeFilePath('notes//./today.md')).toBe('notes/today.md');
    expect(normalizeFilePath('notes/')).toBe('notes');
    for (const bad of ['/etc/passwd', '../up.txt', 'a/../../b', '', './', 'a\\..\\b', 'nul\u0000byte']) {
      expect(() => normalizeFilePath(bad), bad).toThrow(expect.objectContaining({ code: 'api:files:path-invalid' }));
    }
    expect(() => normalizeFilePath('x'.repeat(1025))).toThrow(
      expect.objectContaining({ code: 'api:files:path-invalid' }),
    );
  });
});

describe.each([
  ['PostgreSQL', () => openPostgres('mt_store_files')],
  ['PGlite', openPglite],
])('file systems on %s', (_driver, open) => {
  let db: Db;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ db, done: close } = await open());
    await migrate(db);
    await createNamespace(db, 'a');
    await createNamespace(db, 'b');
  }, 120_000);

  afterAll(async () => {
    await close?.();
  });

  async function count(id: string): Promise<number> {
    const { rows } = await db.query<{ n: number | string }>(
      'SELECT count(*) AS n FROM mt_files WHERE file_system_id = $1',
      [id],
    );
    return Number(rows[0].n);
  }

  it('store text and binary files by path, with an ETag, and keep the totals', async () => {
    const fs = await createFileSystem(db, 'a', { name: 'notes', description: 'Working notes' });
    const binary = Buffer.from([0, 255, 1, 254, 0, 10, 13]);
    const text = Buffer.from('héllo\n');
    const put = await putFile(db, 'a', fs.id, { path: 'bin/blob', content: binary }, limits);
    expect(put.created).toBe(true);
    expect(put.file).toMatchObject({ path: 'bin/blob', size: 7, contentType: 'application/octet-stream' });
    await putFile(db, 'a', fs.id, { path: './txt//a.md', content: text, contentType: 'text/markdown' }, limits);
    const read = await getFile(db, 'a', fs.id, 'bin/blob');
    expect(read.content.equals(binary)).toBe(true);
    expect(read.etag).toBe(put.file.etag);
    expect((await getFile(db, 'a', fs.id, 'txt/a.md')).content.toString()).toBe('héllo\n');
    expect(await getFileSystem(db, 'a', fs.id)).toMatchObject({ files: 2, bytes: 7 + text.length });
    const replaced = await putFile(db, 'a', fs.id, { path: 'bin/blob', content: Buffer.from('x') }, limits);
    expect(replaced.created).toBe(false);
    expect(replaced.file.etag).not.toBe(put.file.etag);
    expect(await getFileSystem(db, 'a', fs.id)).toMatchObject({ files: 2, bytes: 1 + text.length });
    expect((await listFileSystems(db, 'a')).map((f) => f.name)).toEqual(['notes']);
    expect(await listFileSystems(db, 'b')).toEqual([]);
  });

  it('list by prefix in byte order of the paths, a page at a time', async () => {
    const fs = await createFileSystem(db, 'a', { name: 'listing' });
    for (const path of ['b/2', 'a/1', 'b/1', 'B/0', 'b/10', 'c']) {
      await putFile(db, 'a', fs.id, { path, content: Buffer.from(path) }, limits);
    }
    const all = await listFiles(db, 'a', fs.id);
    expect(all.files.map((f) => f.path)).toEqual(['B/0', 'a/1', 'b/1', 'b/10', 'b/2', 'c']);
    expect(all.nextCursor).toBeNull();
    const first = await listFiles(db, 'a', fs.id, { prefix: 'b/', limit: 2 });
    expect(first.files.map((f) => f.path)).toEqual(['b/1', 'b/10']);
    const second = await listFiles(db, 'a', fs.id, { prefix: 'b/', limit: 2, cursor: first.nextCursor ?? '' });
    expect(second.files.map((f) => f.path)).toEqual(['b/2']);
    expect(second.nextCursor).toBeNull();
    await expect(listFiles(db, 'a', fs.id, { cursor: 'not-a-cursor' })).rejects.toMatchObject({
      code: 'api:files:cursor-invalid',
    });
    await expect(listFiles(db, 'a', fs.id, { prefix: '../' })).rejects.toMatchObject({
      code: 'api:files:path-invalid',
    });
  });

  it('check If-Match and If-None-Match in the write, and write nothing when they fail', async () => {
    const fs = await createFileSystem(db, 'a', { name: 'conditions' });
    const { file } = await putFile(db, 'a', fs.id, { path: 'f', content: Buffer.from('one') }, limits);
    const stale = putFile(
      db,
      'a',
      fs.id,
      { path: 'f', content: Buffer.from('two'), condition: { ifMatch: ['"other"'] } },
      limits,
    );
    await expect(stale).rejects.toMatchObject({ code: 'api:files:precondition-failed', status: 412 });
    const created = putFile(
      db,
      'a',
      fs.id,
      { path: 'f', content: Buffer.from('two'), condition: { ifNoneMatch: true } },
      limits,
    );
    await expect(created).rejects.toMatchObject({ code: 'api:files:precondition-failed' });
    const missing = putFile(
      db,
      'a',
      fs.id,
      { path: 'g', content: Buffer.from('two'), condition: { ifMatch: ['*'] } },
      limits,
    );
    await expect(missing).rejects.toMatchObject({ code: 'api:files:precondition-failed' });
    expect((await getFile(db, 'a', fs.id, 'f')).content.toString()).toBe('one');
    expect(await count(fs.id)).toBe(1);
    await putFile(
      db,
      'a',
      fs.id,
      { path: 'f', content: Buffer.from('two'), condition: { ifMatch: [file.etag] } },
      limits,
    );
    expect((await getFile(db, 'a', fs.id, 'f')).content.toString()).toBe('two');
  });

  it('refuse a file over its limit and a write past the file system limit, storing nothing', async () => {
    const fs = await createFileSystem(db, 'a', { name: 'limits' });
    await expect(putFile(db, 'a', fs.id, { path: 'big', content: Buffer.alloc(65) }, limits)).rejects.toMatchObject({
      code: 'api:files:too-large',
      status: 413,
    });
    await putFile(db, 'a', fs.id, { path: 'one', content: Buffer.alloc(60) }, limits);
    await expect(putFile(db, 'a', fs.id, { path: 'two', content: Buffer.alloc(41) }, limits)).rejects.toMatchObject({
      code: 'api:file-systems:full',
      status: 413,
    });
    expect(await count(fs.id)).toBe(1);
    expect(await getFileSystem(db, 'a', fs.id)).toMatchObject({ files: 1, bytes: 60 });
    // Replacing a file counts only the difference; exactly at the limit is allowed.
    await putFile(db, 'a', fs.id, { path: 'two', content: Buffer.alloc(40) }, limits);
    await putFile(db, 'a', fs.id, { path: 'one', content: Buffer.alloc(50) }, limits);
    expect(await getFileSystem(db, 'a', fs.id)).toMatchObject({ files: 2, bytes: 90 });
  });

  it('keep the limit under concurrent writes: the row lock lets only what fits in', async () => {
    const fs = await createFileSystem(db, 'a', { name: 'race' });
    const writes = Array.from({ length: 6 }, (_, i) =>
      putFile(db, 'a', fs.id, { path: `w${i}`, content: Buffer.alloc(30) }, limits),
    );
    const results = await Promise.allSettled(writes);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(await getFileSystem(db, 'a', fs.id)).toMatchObject({ files: 3, bytes: 90 });
    expect(await count(fs.id)).toBe(3);
  });

  it('move a file, refusing to replace another unless told to', async () => {
    const fs = await createFileSystem(db, 'a', { name: 'moves' });
    await putFile(db, 'a', fs.id, { path: 'draft.md', content: Buffer.from('draft') }, limits);
    await putFile(db, 'a', fs.id, { path: 'final.md', content: Buffer.from('old final') }, limits);
    await expect(moveFile(db, 'a', fs.id, { from: 'draft.md', to: 'final.md' })).rejects.toMatchObject({
      code: 'api:files:exists',
      status: 409,
    });
    await expect(moveFile(db, 'a', fs.id, { from: 'nope', to: 'x' })).rejects.toMatchObject({
      code: 'api:files:not-found',
    });
    const moved = await moveFile(db, 'a', fs.id, { from: 'draft.md', to: 'final.md', overwrite: true });
    expect(moved.path).toBe('final.md');
    expect((await getFile(db, 'a', fs.id, 'final.md')).content.toString()).toBe('draft');
    await expect(getFile(db, 'a', fs.id, 'draft.md')).rejects.toMatchObject({ code: 'api:files:not-found' });
    expect(await getFileSystem(db, 'a', fs.id)).toMatchObject({ files: 1, bytes: 5 });
    await moveFile(db, 'a', fs.id, { from: 'final.md', to: 'archive/final.md' });
    expect((await listFiles(db, 'a', fs.id)).files.map((f) => f.path)).toEqual(['archive/final.md']);
    await deleteFile(db, 'a', fs.id, 'archive/final.md');
    expect(await getFileSystem(db, 'a', fs.id)).toMatchObject({ files: 0, bytes: 0 });
  });

  it("never reach another namespace's file system, nor a deleted one", async () => {
    const fs = await createFileSystem(db, 'a', { name: 'private' });
    await putFile(db, 'a', fs.id, { path: 'secret.txt', content: Buffer.from('a only') }, limits);
    const code = { code: 'api:file-systems:not-found', status: 404 };
    await expect(getFile(db, 'b', fs.id, 'secret.txt')).rejects.toMatchObject(code);
    await expect(listFiles(db, 'b', fs.id)).rejects.toMatchObject(code);
    await expect(putFile(db, 'b', fs.id, { path: 'x', content: Buffer.from('x') }, limits)).rejects.toMatchObject(code);
    await expect(deleteFileSystem(db, 'b', fs.id)).rejects.toMatchObject(code);
    await expect(getFileSystem(db, 'a', 'not-a-uuid')).rejects.toMatchObject(code);
    expect(await count(fs.id)).toBe(1);
    await deleteFileSystem(db, 'a', fs.id);
    await expect(listFiles(db, 'a', fs.id)).rejects.toMatchObject(code);
    await expect(putFile(db, 'a', fs.id, { path: 'x', content: Buffer.from('x') }, limits)).rejects.toMatchObject(code);
    expect(await count(fs.id)).toBe(0);
    await expect(createFileSystem(db, 'a', { name: 'notes' })).rejects.toMatchObject({
      code: 'api:file-systems:exists',
    });
  });
});
