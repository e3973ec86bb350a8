import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { issuePlatformToken } from '@maitento/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth, startTestServer, type TestServer } from './helpers.js';

const fixture = (name: string) => readFileSync(new URL(`../../../test/fixtures/handbook/${name}`, import.meta.url));

let server: TestServer;
let otherKey: string;
let kb: string;
const LIMIT = 64 * 1024;
const secretKey = randomBytes(32);

async function add(id: string, name: string, type: string, body: Buffer | string, key = server.adminKey) {
  return server.app.inject({
    method: 'POST',
    url: `/v1/knowledge-bases/${id}/documents?name=${encodeURIComponent(name)}`,
    headers: { ...auth(key), 'content-type': type },
    payload: body,
  });
}

async function search(id: string, query: string, key = server.adminKey) {
  return server.app.inject({
    method: 'POST',
    url: `/v1/knowledge-bases/${id}/search`,
    headers: auth(key),
    payload: { query },
  });
}

async function stored(): Promise<{ documents: number; chunks: number }> {
  const { rows } = await server.db.query<{ documents: string; chunks: string }>(
    'SELECT (SELECT count(*) FROM mt_kb_documents) AS documents, (SELECT count(*) FROM mt_kb_chunks) AS chunks',
  );
  return { documents: Number(rows[0].documents), chunks: Number(rows[0].chunks) };
}

beforeAll(async () => {
  server = await startTestServer({ server: { knowledgeDocumentLimit: LIMIT, secretKey } });
  const ns = await server.app.inject({
    method: 'POST',
    url: '/v1/namespaces',
    headers: auth(server.adminKey),
    payload: { name: 'other' },
  });
  otherKey = ns.json().key.key;
  const created = await server.app.inject({
    method: 'POST',
    url: '/v1/knowledge-bases',
    headers: auth(server.adminKey),
    payload: { name: 'handbook', description: 'The staff handbook' },
  });
  expect(created.statusCode, created.body).toBe(201);
  kb = created.json().id;
}, 60_000);

afterAll(async () => server?.close());

describe('knowledge bases over REST', () => {
  it('takes Markdown, PDF and HTML, split into passages that follow headings and pages', async () => {
    const md = await add(kb, 'leave.md', 'text/markdown; charset=utf-8', fixture('leave.md'));
    expect(md.statusCode, md.body).toBe(201);
    expect(md.json()).toMatchObject({ name: 'leave.md', contentType: 'text/markdown', chunkCount: 3, status: 'ready' });
    const pdf = await add(kb, 'expenses.pdf', 'application/pdf', fixture('expenses.pdf'));
    expect(pdf.statusCode, pdf.body).toBe(201);
    expect(pdf.json().chunkCount).toBe(2);
    const html = await add(kb, 'equipment.html', 'text/html', fixture('equipment.html'));
    expect(html.statusCode, html.body).toBe(201);
    const listed = await server.app.inject({
      method: 'GET',
      url: `/v1/knowledge-bases/${kb}/documents`,
      headers: auth(server.adminKey),
    });
    expect(listed.json().map((d: { name: string }) => d.name)).toEqual(['equipment.html', 'expenses.pdf', 'leave.md']);
    const got = await server.app.inject({
      method: 'GET',
      url: `/v1/knowledge-bases/${kb}`,
      headers: auth(server.adminKey),
    });
    expect(got.json()).toMatchObject({ name: 'handbook', documentCount: 3, language: 'english' });
  });

  it('answers a question with the passage, its document, title and position', async () => {
    const leave = await search(kb, 'How many weeks of parental leave can parents take?');
    expect(leave.statusCode, leave.body).toBe(200);
    expect(leave.json().results[0]).toMatchObject({
      title: 'Leave > Parental leave',
      position: 2,
      document: { name: 'leave.md' },
      text: expect.stringContaining('16 weeks'),
    });
    const pdf = await search(kb, 'Is a first class train ticket refunded?');
    expect(pdf.json().results[0]).toMatchObject({ title: 'Page 1', document: { name: 'expenses.pdf' } });
    const html = await search(kb, 'I lost my laptop, who do I tell?');
    expect(html.json().results[0]).toMatchObject({ title: 'Equipment > Lost or broken equipment' });
    expect(html.json().results[0].text).toContain('24 hours');
    expect(html.json().results[0].text).not.toContain('<b>');
  });

  it('replaces a document added again under its name', async () => {
    const again = await add(
      kb,
      'leave.md',
      'text/markdown',
      '# Leave\n\nEvery employee has 30 days of annual leave.\n',
    );
    expect(again.statusCode).toBe(201);
    const found = await search(kb, 'annual leave days');
    expect(found.json().results.filter((r: { document: { name: string } }) => r.document.name === 'leave.md')).toEqual([
      expect.objectContaining({ text: 'Every employee has 30 days of annual leave.' }),
    ]);
    const docs = await server.app.inject({
      method: 'GET',
      url: `/v1/knowledge-bases/${kb}/documents`,
      headers: auth(server.adminKey),
    });
    expect(docs.json()).toHaveLength(3);
  });

  it('lets a platform token of the namespace search by partitionId, but not write, and not reach another namespace', async () => {
    const token = issuePlatformToken(secretKey, 'default');
    const write = await server.app.inject({
      method: 'POST',
      url: '/v1/knowledge-bases',
      headers: auth(token),
      payload: { name: 'by-a-tool' },
    });
    expect([write.statusCode, write.json().code]).toEqual([403, 'api:auth:forbidden']);
    const byBody = await server.app.inject({
      method: 'POST',
      url: '/v1/knowledge-bases/search',
      headers: auth(token),
      payload: { partitionId: kb, query: 'receipt', limit: 1 },
    });
    expect(byBody.statusCode, byBody.body).toBe(200);
    expect(byBody.json().results).toHaveLength(1);
    const foreign = await server.app.inject({
      method: 'POST',
      url: '/v1/knowledge-bases/search',
      headers: auth(otherKey),
      payload: { partitionId: kb, query: 'receipt' },
    });
    expect([foreign.statusCode, foreign.json().code]).toEqual([404, 'api:knowledge:not-found']);
    expect(
      (await server.app.inject({ method: 'GET', url: `/v1/knowledge-bases/${kb}`, headers: auth(otherKey) }))
        .statusCode,
    ).toBe(404);
    const added = await add(kb, 'x.md', 'text/markdown', '# X\n\ntext', otherKey);
    expect([added.statusCode, added.json().code]).toEqual([404, 'api:knowledge:not-found']);
  });
});

describe('bad documents: a clear code, nothing stored', () => {
  it('refuses an unreadable PDF, an empty file, text that is not UTF-8, an unknown type and a file over the limit', async () => {
    const before = await stored();
    const cases: [string, string, Buffer | string, number, string][] = [
      [
        'broken.pdf',
        'application/pdf',
        Buffer.from('%PDF-1.4 this is not a pdf at all'),
        422,
        'api:knowledge:unreadable',
      ],
      ['empty.md', 'text/markdown', '', 422, 'api:knowledge:empty'],
      ['blank.txt', 'text/plain', '\n\n   \n', 422, 'api:knowledge:empty'],
      ['latin1.txt', 'text/plain', Buffer.from([0x63, 0x61, 0x66, 0xe9]), 422, 'api:knowledge:unreadable'],
      ['sheet.xlsx', 'application/vnd.ms-excel', 'x', 415, 'api:knowledge:unsupported-type'],
      ['big.md', 'text/markdown', 'a'.repeat(LIMIT + 1), 413, 'api:request:too-large'],
    ];
    for (const [name, type, body, status, code] of cases) {
      const res = await add(kb, name, type, body);
      expect([name, res.statusCode, res.json().code]).toEqual([name, status, code]);
    }
    const big = await add(kb, 'big.md', 'text/markdown', 'a'.repeat(LIMIT + 1));
    expect(big.json().error).toContain(String(LIMIT));
    expect(await stored()).toEqual(before);
  });

  it('refuses a search, a document and a delete of a deleted knowledge base, and a malformed id', async () => {
    const made = await server.app.inject({
      method: 'POST',
      url: '/v1/knowledge-bases',
      headers: auth(server.adminKey),
      payload: { name: 'old' },
    });
    const id = made.json().id;
    expect((await add(id, 'a.md', 'text/markdown', '# A\n\nalpha')).statusCode).toBe(201);
    const deleted = await server.app.inject({
      method: 'DELETE',
      url: `/v1/knowledge-bases/${id}`,
      headers: auth(server.adminKey),
    });
    expect(deleted.statusCode).toBe(204);
    expect((await search(id, 'alpha')).json().code).toBe('api:knowledge:not-found');
    expect((await add(id, 'a.md', 'text/markdown', '# A\n\nalpha')).json().code).toBe('api:knowledge:not-found');
    expect((await search('not-a-uuid', 'alpha')).json().code).toBe('api:knowledge:not-found');
    const { rows } = await server.db.query('SELECT 1 FROM mt_kb_chunks WHERE knowledge_base_id = $1', [id]);
    expect(rows).toEqual([]);
  });

  it('refuses a user key that writes, a taken name and an unknown language', async () => {
    const user = await server.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(server.adminKey),
      payload: { role: 'user' },
    });
    const userKey = user.json().key;
    expect((await add(kb, 'u.md', 'text/markdown', '# U\n\nu', userKey)).json().code).toBe('api:auth:forbidden');
    expect((await search(kb, 'receipt', userKey)).statusCode).toBe(200);
    const taken = await server.app.inject({
      method: 'POST',
      url: '/v1/knowledge-bases',
      headers: auth(server.adminKey),
      payload: { name: 'handbook' },
    });
    expect([taken.statusCode, taken.json().code]).toEqual([409, 'api:knowledge:exists']);
    const lang = await server.app.inject({
      method: 'POST',
      url: '/v1/knowledge-bases',
      headers: auth(server.adminKey),
      payload: { name: 'x', language: 'klingon' },
    });
    expect([lang.statusCode, lang.json().code]).toEqual([400, 'api:knowledge:language-unknown']);
  });
});
