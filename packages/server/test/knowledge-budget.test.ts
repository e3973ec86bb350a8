import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createDeflate } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentChunks } from '../src/knowledge/budget.js';
import { auth, startTestServer, type TestServer } from './helpers.js';

// Issue #41 item 8: one upload must not stall or exhaust the server. A PDF whose content stream inflates to hundreds
// of MB (a Flate bomb, built here with zlib) is refused with api:knowledge:document-too-complex within seconds, the
// process's memory stays bounded, /health answers meanwhile, and nothing of the document is stored.
const BOMB_MB = 256;
const MEMORY_MB = 64;
let server: TestServer;
let kb: string;
let bomb: Buffer;

/** A PDF of `pages` pages, each drawing the text of `contents` (a stream, deflated when `deflated`). */
function pdf(contents: Buffer[], deflated: boolean): Buffer {
  const objects: Buffer[] = [];
  const pageIds = contents.map((_, i) => 4 + i * 2);
  objects.push(Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'));
  objects.push(
    Buffer.from(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${contents.length} >>`),
  );
  objects.push(Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'));
  for (const [i, content] of contents.entries()) {
    const id = pageIds[i] as number;
    objects.push(
      Buffer.from(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${id + 1} 0 R >>`,
      ),
    );
    const filter = deflated ? ' /Filter /FlateDecode' : '';
    objects.push(
      Buffer.concat([
        Buffer.from(`<< /Length ${content.length}${filter} >>\nstream\n`),
        content,
        Buffer.from('\nendstream'),
      ]),
    );
  }
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let size = parts[0]?.length ?? 0;
  for (const [i, object] of objects.entries()) {
    offsets.push(size);
    const text = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), object, Buffer.from('\nendobj\n')]);
    parts.push(text);
    size += text.length;
  }
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f ',
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `),
    'trailer',
    `<< /Size ${objects.length + 1} /Root 1 0 R >>`,
    'startxref',
    String(size),
    '%%EOF',
    '',
  ].join('\n');
  return Buffer.concat([...parts, Buffer.from(xref)]);
}

/** `mb` MiB of zeros, deflated as they stream (the test never holds them inflated). */
async function deflatedZeros(mb: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < mb; i++) if (!deflate.write(zeros)) await once(deflate, 'drain');
  deflate.end();
  await once(deflate, 'end');
  return Buffer.concat(out);
}

async function add(name: string, type: string, body: Buffer | string) {
  return server.app.inject({
    method: 'POST',
    url: `/v1/knowledge-bases/${kb}/documents?name=${encodeURIComponent(name)}`,
    headers: { ...auth(server.adminKey), 'content-type': type },
    payload: body,
  });
}

async function stored(): Promise<{ documents: number; chunks: number }> {
  const { rows } = await server.db.query<{ documents: string; chunks: string }>(
    'SELECT (SELECT count(*) FROM mt_kb_documents) AS documents, (SELECT count(*) FROM mt_kb_chunks) AS chunks',
  );
  return { documents: Number(rows[0].documents), chunks: Number(rows[0].chunks) };
}

beforeAll(async () => {
  server = await startTestServer({
    server: { knowledgeExtractBudget: { memoryMb: MEMORY_MB, timeoutMs: 10_000, pages: 3 } },
  });
  const created = await server.app.inject({
    method: 'POST',
    url: '/v1/knowledge-bases',
    headers: auth(server.adminKey),
    payload: { name: 'budget' },
  });
  expect(created.statusCode, created.body).toBe(201);
  kb = created.json().id;
  bomb = pdf([await deflatedZeros(BOMB_MB)], true);
}, 60_000);

afterAll(async () => server?.close());

describe('the budget of reading one document', () => {
  it(`refuses a ${BOMB_MB} MiB Flate bomb within seconds, memory bounded, /health answering, nothing stored`, async () => {
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const before = await stored();
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 10);
    const healthTimes: number[] = [];
    let uploading = true;
    const health = (async () => {
      while (uploading) {
        const started = performance.now();
        const res = await server.app.inject({ method: 'GET', url: '/health' });
        healthTimes.push(performance.now() - started);
        expect(res.statusCode).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const started = performance.now();
    const res = await add('bomb.pdf', 'application/pdf', bomb);
    const took = performance.now() - started;
    uploading = false;
    await health;
    clearInterval(sampler);
    expect([res.statusCode, res.json().code], res.body).toEqual([422, 'api:knowledge:document-too-complex']);
    expect(res.json().error).toContain(`more than ${MEMORY_MB} MiB of memory`);
    expect(took).toBeLessThan(5_000);
    expect(healthTimes.length).toBeGreaterThan(0);
    expect(Math.max(...healthTimes)).toBeLessThan(1_000);
    // The thread is stopped near its 64 MiB: the process grows by far less than the 256 MiB the stream holds.
    expect((peak - baseline) / (1024 * 1024)).toBeLessThan(200);
    expect(await stored()).toEqual(before);
  });

  it('stops a document at its deadline, and one with more pages than the budget', async () => {
    const slow = await startTestServer({ server: { knowledgeExtractBudget: { timeoutMs: 300, memoryMb: 2048 } } });
    try {
      const made = await slow.app.inject({
        method: 'POST',
        url: '/v1/knowledge-bases',
        headers: auth(slow.adminKey),
        payload: { name: 'slow' },
      });
      const started = performance.now();
      const res = await slow.app.inject({
        method: 'POST',
        url: `/v1/knowledge-bases/${made.json().id}/documents?name=bomb.pdf`,
        headers: { ...auth(slow.adminKey), 'content-type': 'application/pdf' },
        payload: bomb,
      });
      expect([res.statusCode, res.json().code], res.body).toEqual([422, 'api:knowledge:document-too-complex']);
      expect(res.json().error).toContain('took longer than 0.3 s');
      expect(performance.now() - started).toBeLessThan(3_000);
    } finally {
      await slow.close();
    }
    const page = Buffer.from('BT /F1 12 Tf 72 720 Td (A page of the handbook.) Tj ET');
    const four = await add('four.pdf', 'application/pdf', pdf([page, page, page, page], false));
    expect([four.statusCode, four.json().code], four.body).toEqual([422, 'api:knowledge:document-too-complex']);
    expect(four.json().error).toContain('it has 4 pages, more than 3');
    const three = await add('three.pdf', 'application/pdf', pdf([page, page, page], false));
    expect(three.statusCode, three.body).toBe(201);
    expect(three.json().chunkCount).toBe(3);
  });

  it('settles a deadline that passes before a fresh thread has started', async () => {
    // 17 MiB: a budget no earlier test used, so no warm thread is at hand and the 1 ms deadline comes first.
    const budget = { timeoutMs: 1, memoryMb: 17, pages: 10, textChars: 1000 };
    await expect(documentChunks('a.md', 'text/markdown', Buffer.from('# A\n\nalpha\n'), budget)).rejects.toMatchObject({
      code: 'api:knowledge:document-too-complex',
      message: expect.stringContaining('took longer than 0.001 s'),
    });
  });

  it('reads an ordinary document in its thread as before', async () => {
    const md = await add(
      'leave.md',
      'text/markdown',
      readFileSync(new URL('../../../test/fixtures/handbook/leave.md', import.meta.url)),
    );
    expect(md.statusCode, md.body).toBe(201);
    expect(md.json().chunkCount).toBe(3);
  });
});
