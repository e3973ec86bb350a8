// npm run bench:knowledge — knowledge bases on PostgreSQL and on PGlite: documents added a second through the REST
// API (Markdown and PDF: extraction, chunking, one transaction), search latency p50/p95 in a knowledge base of
// BENCH_CHUNKS passages (default 100,000) in full-text and hybrid modes, and recall@5 of each mode on the question
// set of bench/knowledge/qa.json (written for this bench, CC0) over the handbook of test/fixtures/handbook.
// Hybrid uses the deterministic fake embedding of @maitento/testkit (64 dimensions, word groups as its "meaning"),
// computed in process: the figures are the database's, not a model's. Writes docs/performance.md between its
// markers (bench/lib/perf-doc.js). Needs a build (`npm run build`) and PostgreSQL at 127.0.0.1:5432 (MT_TEST_PG_URL).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEgressPolicy } from '@maitento/egress';
import { unit } from '@maitento/engine';
import { createServer } from '@maitento/server';
import {
  createPgDb,
  createPgliteDb,
  hybridSearchKnowledgeBase,
  putDocument,
  searchKnowledgeBase,
  storeEmbeddings,
} from '@maitento/store';
import { copyPgliteTemplate, createTestDatabase, fakeEmbedding } from '@maitento/testkit';
import { percentile } from './lib/measure.js';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

// The exact vector scan of a hybrid search at 100,000 passages may take longer than a statement may by default
// (MT_DB_TIMEOUT_MS, 1.5 s) on a loaded machine: the bench lets it finish, to measure it.
process.env.MT_DB_TIMEOUT_MS ??= '600000';
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 100_000);
const PER_DOCUMENT = 100;
const MARKDOWN_DOCS = Number(process.env.BENCH_MD_DOCS ?? 200);
const PDF_DOCS = Number(process.env.BENCH_PDF_DOCS ?? 50);
const DIMENSIONS = 64;
const root = fileURLToPath(new URL('..', import.meta.url));
const fixture = (name) => readFileSync(join(root, 'test/fixtures/handbook', name));
const qa = JSON.parse(readFileSync(join(root, 'bench/knowledge/qa.json'), 'utf8'));
// The fake model's "meaning": words of one group point the same way.
const CONCEPTS = [
  ['vacation', 'holiday', 'leave', 'off'],
  ['computer', 'laptop', 'notebook', 'monitor', 'screen'],
  ['ill', 'sick', 'doctor'],
  ['wine', 'alcohol', 'beer'],
  ['reimbursed', 'refunded', 'refund', 'reimburse'],
  ['stolen', 'lost', 'broken'],
  ['birth', 'parent', 'parental', 'child'],
  ['receipt', 'note'],
];
const embedText = (text) => unit(fakeEmbedding(text, CONCEPTS, DIMENSIONS));
const WORDS = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
  .toLowerCase()
  .match(/[a-z]{4,}/g);

function sentence(seed) {
  let x = seed;
  const words = [];
  for (let i = 0; i < 40; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    words.push(WORDS[x % WORDS.length]);
  }
  return `${words.join(' ')}.`;
}

const auth = (key) => ({ authorization: `Bearer ${key}` });

async function openDriver(driver) {
  if (driver === 'PostgreSQL') {
    const database = await createTestDatabase('mt_bench_knowledge');
    const db = createPgDb(database.url);
    const done = async () => {
      await db.close();
      await database.drop();
    };
    return { db, done };
  }
  const dir = mkdtempSync(join(tmpdir(), 'mt-bench-knowledge-'));
  await copyPgliteTemplate(join(dir, 'db'));
  const db = await createPgliteDb(join(dir, 'db'));
  const done = async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { db, done };
}

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

async function latencies(queries, fn) {
  const out = [];
  for (const query of queries) {
    const t0 = performance.now();
    await fn(query);
    out.push(performance.now() - t0);
  }
  out.sort((a, b) => a - b);
  return { p50: percentile(out, 50), p95: percentile(out, 95), n: out.length };
}

async function bench(driver) {
  const { db, done } = await openDriver(driver);
  const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
  const app = await createServer({
    db,
    secretKey: randomBytes(32),
    egress: createEgressPolicy(),
    bootstrapKey: adminKey,
    logger: false,
    embeddingModel: null,
  });
  try {
    const create = async (name) =>
      (
        await app.inject({ method: 'POST', url: '/v1/knowledge-bases', headers: auth(adminKey), payload: { name } })
      ).json().id;
    const add = async (kb, name, type, payload) => {
      const res = await app.inject({
        method: 'POST',
        url: `/v1/knowledge-bases/${kb}/documents?name=${name}`,
        headers: { ...auth(adminKey), 'content-type': type },
        payload,
      });
      if (res.statusCode !== 201) throw new Error(res.body);
    };
    // Documents a second, one request after the other.
    const ingest = await create('ingest');
    const markdown = fixture('leave.md');
    const pdf = fixture('expenses.pdf');
    const mdSeconds = await timed(async () => {
      for (let i = 0; i < MARKDOWN_DOCS; i++) await add(ingest, `leave-${i}.md`, 'text/markdown', markdown);
    });
    const pdfSeconds = await timed(async () => {
      for (let i = 0; i < PDF_DOCS; i++) await add(ingest, `expenses-${i}.pdf`, 'application/pdf', pdf);
    });

    // Recall@5 on the handbook.
    const handbook = await create('handbook');
    await add(handbook, 'leave.md', 'text/markdown', markdown);
    await add(handbook, 'expenses.pdf', 'application/pdf', pdf);
    await add(handbook, 'equipment.html', 'text/html', fixture('equipment.html'));
    await embedAll(db, handbook);
    let fullTextHits = 0;
    let hybridHits = 0;
    for (const q of qa) {
      const hit = (results) => results.some((r) => r.document.name === q.document && r.title === q.title);
      const ft = await searchKnowledgeBase(db, 'default', handbook, { query: q.question, limit: 5 });
      const hy = await hybridSearchKnowledgeBase(db, 'default', handbook, {
        query: q.question,
        limit: 5,
        vector: embedText(q.question),
      });
      if (hit(ft)) fullTextHits++;
      if (hit(hy)) hybridHits++;
    }

    // A knowledge base of CHUNKS passages, vectors included, written through the store.
    const big = await create('big');
    const loadSeconds = await timed(async () => {
      for (let d = 0; d < CHUNKS / PER_DOCUMENT; d++) {
        const chunks = Array.from({ length: PER_DOCUMENT }, (_, i) => ({
          title: `Section ${i}`,
          text: sentence(d * PER_DOCUMENT + i + 1),
        }));
        const doc = await putDocument(db, 'default', big, {
          name: `doc-${d}.md`,
          contentType: 'text/markdown',
          bytes: 0,
          chunks,
          embedding: true,
        });
        await storeEmbeddings(
          db,
          chunks.map((c, position) => ({ documentId: doc.id, position, vector: embedText(`${c.title} ${c.text}`) })),
        );
      }
    });
    if (driver === 'PostgreSQL') await db.query('ANALYZE mt_kb_chunks');
    const questions = qa.map((q) => q.question);
    const words = Array.from({ length: 20 }, (_, i) =>
      sentence(7919 * (i + 1))
        .split(' ')
        .slice(0, 6)
        .join(' '),
    );
    const fullText = await latencies([...questions, ...words], (query) =>
      searchKnowledgeBase(db, 'default', big, { query, limit: 5 }),
    );
    const hybridQueries = questions.slice(0, driver === 'PGlite' ? 8 : 16);
    const hybrid = await latencies(hybridQueries, (query) =>
      hybridSearchKnowledgeBase(db, 'default', big, { query, limit: 5, vector: embedText(query) }),
    );
    return {
      driver,
      mdPerSecond: MARKDOWN_DOCS / mdSeconds,
      pdfPerSecond: PDF_DOCS / pdfSeconds,
      loadSeconds,
      fullText,
      hybrid,
      recall: { fullText: fullTextHits / qa.length, hybrid: hybridHits / qa.length },
    };
  } finally {
    await app.close();
    await done();
  }
}

async function embedAll(db, kb) {
  const { rows } = await db.query(
    'SELECT document_id, position, title, text FROM mt_kb_chunks WHERE knowledge_base_id = $1',
    [kb],
  );
  await storeEmbeddings(
    db,
    rows.map((r) => ({
      documentId: r.document_id,
      position: r.position,
      vector: embedText(r.title === '' ? r.text : `${r.title}\n\n${r.text}`),
    })),
  );
}

const loadAtStart = loadavg()[0];
const results = [];
for (const driver of (process.env.BENCH_DRIVERS ?? 'PostgreSQL,PGlite').split(',')) {
  console.log(`${driver}: ...`);
  const r = await bench(driver);
  console.log(JSON.stringify(r));
  results.push(r);
}

const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(0));
const rows = results
  .map(
    (r) =>
      `| ${r.driver} | ${r.mdPerSecond.toFixed(1)} | ${r.pdfPerSecond.toFixed(1)} | ${ms(r.fullText.p50)} / ${ms(r.fullText.p95)} (${r.fullText.n}) | ${ms(r.hybrid.p50)} / ${ms(r.hybrid.p95)} (${r.hybrid.n}) | ${(r.recall.fullText * 100).toFixed(0)}% | ${(r.recall.hybrid * 100).toFixed(0)}% | ${r.loadSeconds.toFixed(0)} s |`,
  )
  .join('\n');
const section = `## Knowledge bases (\`npm run bench:knowledge\`)

${provenance('npm run build && npm run bench:knowledge')} Load average at the start: ${loadAtStart.toFixed(1)}.

Documents a second: ${MARKDOWN_DOCS}
Markdown files (\`test/fixtures/handbook/leave.md\`, 3 passages) and ${PDF_DOCS} PDFs (\`expenses.pdf\`, 2 pages) added
one request after the other through the REST API (\`inject\`: extraction, chunking, one transaction each). Search:
a knowledge base of ${CHUNKS.toLocaleString('en')} passages (${CHUNKS / PER_DOCUMENT} documents of ${PER_DOCUMENT}, 40 words each, 64-dimension
vectors), one search after the other, limit 5; the number of queries in brackets. Hybrid reads the full-text
ranking and the exact vector ranking (a dot product with every vector of the knowledge base, in SQL) 50 deep each
and fuses them; its query vector comes from the deterministic fake embedding of \`@maitento/testkit\`, computed in
process, so the figure is the database's work, not a model's. Recall@5: the share of the ${qa.length} questions of
\`bench/knowledge/qa.json\` (written for this bench, CC0) whose answering passage is among the top 5 of the handbook
(\`test/fixtures/handbook\`); hybrid's recall is that of the fake model's word groups, a check of the fusion, not
a measure of a real embedding model. Loading the passages with their vectors through the store took the last column.

| Database | Markdown docs/s | PDF docs/s | full-text p50 / p95 ms | hybrid p50 / p95 ms | recall@5 full-text | recall@5 hybrid | load |
| --- | --- | --- | --- | --- | --- | --- | --- |
${rows}

Full-text search scores only the candidates the GIN index picks (docs/knowledge-bases.md, decision 0022); hybrid
adds the exact vector ranking, whose cost grows with the passages (pgvector's index where the server has it).`;
writeBenchSection('knowledge', section);
