import { randomBytes } from 'node:crypto';
import { issuePlatformToken } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, startTestServer, type TestServer } from './helpers.js';

// The REST API of file systems on a real PostgreSQL database: files by path, text and binary, ETags, limits
// (small ones here), paths, paging, move, and a namespace's file systems out of every other namespace's reach.
const secretKey = randomBytes(32);
let server: TestServer;
let otherKey: string;
let userKey: string;

beforeAll(async () => {
  server = await startTestServer({
    server: { secretKey, fileLimits: { maxFileBytes: 1024, maxFileSystemBytes: 3000 } },
  });
  const other = await server.app.inject({
    method: 'POST',
    url: '/v1/namespaces',
    headers: auth(server.adminKey),
    payload: { name: 'other' },
  });
  otherKey = other.json().key.key;
  const user = await server.app.inject({
    method: 'POST',
    url: '/v1/keys',
    headers: auth(server.adminKey),
    payload: { role: 'user' },
  });
  userKey = user.json().key;
});

afterAll(async () => {
  await server?.close();
});

async function createFs(name: string, key = server.adminKey): Promise<string> {
  const res = await server.app.inject({
    method: 'POST',
    url: '/v1/file-systems',
    headers: auth(key),
    payload: { name },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

function put(id: string, path: string, body: string | Buffer, headers: Record<string, string> = {}, key?: string) {
  return server.app.inject({
    method: 'PUT',
    url: `/v1/file-systems/${id}/files/${path}`,
    headers: { ...auth(key ?? server.adminKey), ...headers },
    payload: body,
  });
}

function get(id: string, path: string, key?: string) {
  return server.app.inject({
    method: 'GET',
    url: `/v1/file-systems/${id}/files/${path}`,
    headers: auth(key ?? server.adminKey),
  });
}

async function stored(id: string): Promise<number> {
  const { rows } = await server.db.query<{ n: string }>(
    'SELECT count(*) AS n FROM mt_files WHERE file_system_id = $1',
    [id],
  );
  return Number(rows[0].n);
}

describe('file systems over REST', () => {
  it('are created by an admin, listed and read by any key of the namespace', async () => {
    const id = await createFs('notes');
    const refused = await server.app.inject({
      method: 'POST',
      url: '/v1/file-systems',
      headers: auth(userKey),
      payload: { name: 'x' },
    });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'api:auth:forbidden']);
    const list = await server.app.inject({ method: 'GET', url: '/v1/file-systems', headers: auth(userKey) });
    expect(list.json()).toEqual([expect.objectContaining({ id, name: 'notes', files: 0, bytes: 0 })]);
    const taken = await server.app.inject({
      method: 'POST',
      url: '/v1/file-systems',
      headers: auth(server.adminKey),
      payload: { name: 'notes' },
    });
    expect([taken.statusCode, taken.json().code]).toEqual([409, 'api:file-systems:exists']);
  });

  it('store text, JSON and binary bodies as sent, and serve them with their type and ETag', async () => {
    const id = await createFs('bodies');
    const binary = Buffer.from([0, 1, 2, 253, 254, 255]);
    const created = await put(id, 'data/blob.bin', binary, { 'content-type': 'application/octet-stream' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ path: 'data/blob.bin', size: 6 });
    expect(created.headers.etag).toBe(created.json().etag);
    const json = await put(id, 'data/config.json', '{"a": 1,  "b":[2]}', { 'content-type': 'application/json' });
    expect(json.statusCode, json.body).toBe(201);
    const text = await put(id, 'notes/today.md', '# Today\n', { 'content-type': 'text/markdown' });
    expect(text.statusCode).toBe(201);
    const untyped = await put(id, 'plain', 'no type');
    expect(untyped.json().contentType).toBe('application/octet-stream');

    const blob = await get(id, 'data/blob.bin');
    expect(blob.rawPayload.equals(binary)).toBe(true);
    expect(blob.headers['content-type']).toBe('application/octet-stream');
    expect(blob.headers.etag).toBe(created.json().etag);
    expect(blob.headers['x-content-type-options']).toBe('nosniff');
    expect((await get(id, 'data/config.json')).body).toBe('{"a": 1,  "b":[2]}');
    const md = await get(id, 'notes/today.md', userKey);
    expect([md.body, md.headers['content-type']]).toEqual(['# Today\n', 'text/markdown']);
    const notModified = await server.app.inject({
      method: 'GET',
      url: `/v1/file-systems/${id}/files/notes/today.md`,
      headers: { ...auth(server.adminKey), 'if-none-match': md.headers.etag as string },
    });
    expect(notModified.statusCode).toBe(304);
    const missing = await get(id, 'notes/none.md');
    expect([missing.statusCode, missing.json().code]).toEqual([404, 'api:files:not-found']);
  });

  it('replace a file only at the ETag of If-Match, and answer 412 with a code otherwise', async () => {
    const id = await createFs('etags');
    const first = await put(id, 'doc.txt', 'one');
    const stale = await put(id, 'doc.txt', 'two', { 'if-match': '"not-the-etag"' });
    expect([stale.statusCode, stale.json().code]).toEqual([412, 'api:files:precondition-failed']);
    expect((await get(id, 'doc.txt')).body).toBe('one');
    const fresh = await put(id, 'doc.txt', 'two', { 'if-match': first.headers.etag as string });
    expect(fresh.statusCode).toBe(200);
    const createOnly = await put(id, 'doc.txt', 'three', { 'if-none-match': '*' });
    expect([createOnly.statusCode, createOnly.json().code]).toEqual([412, 'api:files:precondition-failed']);
    const deleteStale = await server.app.inject({
      method: 'DELETE',
      url: `/v1/file-systems/${id}/files/doc.txt`,
      headers: { ...auth(server.adminKey), 'if-match': first.headers.etag as string },
    });
    expect(deleteStale.statusCode).toBe(412);
    expect((await get(id, 'doc.txt')).body).toBe('two');
  });

  it('refuse absolute and .. paths and files over the limits with codes, storing nothing', async () => {
    const id = await createFs('limits');
    // A URL's own `..` segments (even as %2E%2E) are resolved by every client before it sends; what reaches the
    // server is a `..` inside an encoded path, as a tool's call encodes the model's path into one parameter.
    for (const path of ['a/..%2F..%2Fb', '..%2Fescape', 'notes%2F..%2F..%2Fx', '%2Fetc%2Fpasswd', '/etc/passwd']) {
      const res = await put(id, path, 'x');
      expect([res.statusCode, res.json().code], path).toEqual([400, 'api:files:path-invalid']);
    }
    const big = await put(id, 'big.bin', Buffer.alloc(1025), { 'content-type': 'application/octet-stream' });
    expect([big.statusCode, big.json().code]).toEqual([413, 'api:files:too-large']);
    const bigJson = await server.app.inject({
      method: 'POST',
      url: `/v1/file-systems/${id}/files`,
      headers: auth(server.adminKey),
      payload: { path: 'big.txt', content: 'y'.repeat(1025) },
    });
    expect([bigJson.statusCode, bigJson.json().code]).toEqual([413, 'api:files:too-large']);
    for (const n of [1, 2]) expect((await put(id, `f${n}`, Buffer.alloc(1000))).statusCode).toBe(201);
    const full = await put(id, 'f3', Buffer.alloc(1001));
    expect([full.statusCode, full.json().code]).toEqual([413, 'api:file-systems:full']);
    expect(await stored(id)).toBe(2);
    const fs = await server.app.inject({ method: 'GET', url: `/v1/file-systems/${id}`, headers: auth(userKey) });
    expect(fs.json()).toMatchObject({ files: 2, bytes: 2000 });
  });

  it('list by prefix a page at a time, write JSON text, move and delete', async () => {
    const id = await createFs('listing');
    for (const path of ['notes/a.md', 'notes/b.md', 'notes/c.md', 'other.txt']) await put(id, path, path);
    const url = `/v1/file-systems/${id}/files?prefix=notes/&limit=2`;
    const first = (await server.app.inject({ method: 'GET', url, headers: auth(userKey) })).json();
    expect(first.files.map((f: { path: string }) => f.path)).toEqual(['notes/a.md', 'notes/b.md']);
    const second = (
      await server.app.inject({
        method: 'GET',
        url: `${url}&cursor=${encodeURIComponent(first.nextCursor)}`,
        headers: auth(userKey),
      })
    ).json();
    expect(second).toMatchObject({ files: [{ path: 'notes/c.md' }], nextCursor: null });

    const written = await server.app.inject({
      method: 'POST',
      url: `/v1/file-systems/${id}/files`,
      headers: auth(userKey),
      payload: { path: 'notes/d.md', content: 'written as JSON' },
    });
    expect(written.statusCode, written.body).toBe(201);
    expect(written.json()).toMatchObject({ path: 'notes/d.md', contentType: 'text/plain; charset=utf-8' });
    expect((await get(id, 'notes/d.md')).body).toBe('written as JSON');

    const move = (payload: unknown) =>
      server.app.inject({ method: 'POST', url: `/v1/file-systems/${id}/move`, headers: auth(userKey), payload });
    const clash = await move({ from: 'notes/d.md', to: 'other.txt' });
    expect([clash.statusCode, clash.json().code]).toEqual([409, 'api:files:exists']);
    const moved = await move({ from: 'notes/d.md', to: 'archive/d.md' });
    expect([moved.statusCode, moved.json().path]).toEqual([200, 'archive/d.md']);
    expect((await get(id, 'archive/d.md')).body).toBe('written as JSON');
    const outside = await move({ from: 'archive/d.md', to: '../d.md' });
    expect([outside.statusCode, outside.json().code]).toEqual([400, 'api:files:path-invalid']);

    const deleted = await server.app.inject({
      method: 'DELETE',
      url: `/v1/file-systems/${id}/files/archive/d.md`,
      headers: auth(userKey),
    });
    expect(deleted.statusCode).toBe(204);
    expect((await get(id, 'archive/d.md')).statusCode).toBe(404);
  });

  it("reach only their own namespace's file systems, with keys and platform tokens alike", async () => {
    const id = await createFs('private');
    await put(id, 'secret.txt', 'default only');
    const foreignToken = issuePlatformToken(secretKey, 'other');
    for (const key of [otherKey, foreignToken]) {
      const read = await get(id, 'secret.txt', key);
      expect([read.statusCode, read.json().code]).toEqual([404, 'api:file-systems:not-found']);
      const write = await put(id, 'planted.txt', 'x', {}, key);
      expect([write.statusCode, write.json().code]).toEqual([404, 'api:file-systems:not-found']);
    }
    const gone = await server.app.inject({
      method: 'DELETE',
      url: `/v1/file-systems/${id}`,
      headers: auth(otherKey),
    });
    expect(gone.statusCode).toBe(404);
    expect(await stored(id)).toBe(1);
    // A platform token of the namespace itself reads and writes its files (what a tool with auth = "Maitento" does).
    const token = issuePlatformToken(secretKey, 'default');
    expect((await put(id, 'by-tool.txt', 'from a tool', {}, token)).statusCode).toBe(201);
    expect((await get(id, 'secret.txt', token)).body).toBe('default only');
  });

  it('are gone with their files once deleted: every later call is api:file-systems:not-found', async () => {
    const id = await createFs('temporary');
    await put(id, 'a.txt', 'a');
    const del = await server.app.inject({
      method: 'DELETE',
      url: `/v1/file-systems/${id}`,
      headers: auth(server.adminKey),
    });
    expect(del.statusCode).toBe(204);
    expect(await stored(id)).toBe(0);
    for (const res of [
      await get(id, 'a.txt'),
      await put(id, 'b.txt', 'b'),
      await server.app.inject({ method: 'GET', url: `/v1/file-systems/${id}/files`, headers: auth(server.adminKey) }),
    ]) {
      expect([res.statusCode, res.json().code]).toEqual([404, 'api:file-systems:not-found']);
    }
    expect(await stored(id)).toBe(0);
  });
});
