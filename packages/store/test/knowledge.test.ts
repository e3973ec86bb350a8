import {
  createKnowledgeBase,
  createNamespace,
  createPgDb,
  createPgliteDb,
  type Db,
  deleteDocument,
  deleteKnowledgeBase,
  getKnowledgeBase,
  listDocuments,
  listKnowledgeBases,
  migrate,
  putDocument,
  chooseVectorSearch,
  detectVectorSupport,
  exactVectorSearch,
  pgvectorSql,
  searchKnowledgeBase,
  storeEmbeddings,
} from '@maitento/store';
import { databaseDrivers } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const handbook = [
  { title: 'Leave', text: 'Every employee has 25 days of annual leave a year. Ask your manager before booking it.' },
  {
    title: 'Leave > Sick leave',
    text: 'Tell your manager on the first morning you are ill. A doctor’s note is needed after three days.',
  },
  { title: 'Expenses', text: 'Train tickets are refunded in second class. Keep every receipt for the expense report.' },
  { title: 'Equipment', text: 'A laptop is issued on the first day; a second screen on request.' },
];

// The same store functions on PostgreSQL (a database of its own) and on PGlite (a copy of the empty template).
const drivers = databaseDrivers('mt_store_knowledge', { pg: createPgDb, pglite: createPgliteDb });

describe.each(drivers)('knowledge bases on %s', (_driver, open) => {
  let db: Db;
  let done: () => Promise<void>;
  let kb: string;

  beforeAll(async () => {
    ({ db, done } = await open());
    await migrate(db);
    await createNamespace(db, 'default');
    await createNamespace(db, 'other');
    kb = (await createKnowledgeBase(db, 'default', { name: 'handbook', description: 'Staff handbook' })).id;
    await putDocument(db, 'default', kb, {
      name: 'handbook.md',
      contentType: 'text/markdown',
      bytes: 400,
      chunks: handbook,
    });
  }, 120_000);

  afterAll(async () => done?.());

  it('finds the passage that shares only some words of a question, with its document, title and position', async () => {
    const results = await searchKnowledgeBase(db, 'default', kb, {
      query: 'How many days of holiday leave do I get each year?',
      limit: 5,
    });
    expect(results[0]).toMatchObject({
      title: 'Leave',
      position: 0,
      document: { name: 'handbook.md' },
      text: expect.stringContaining('25 days'),
    });
    expect(results[0].score).toBeGreaterThan(0);
    expect(results.map((r) => r.title)).toEqual(['Leave', 'Leave > Sick leave', 'Equipment']);
  });

  it('ranks a quoted phrase above passages that have its words apart', async () => {
    const results = await searchKnowledgeBase(db, 'default', kb, { query: '"sick leave" manager', limit: 5 });
    expect(results[0].title).toBe('Leave > Sick leave');
    const plain = await searchKnowledgeBase(db, 'default', kb, { query: 'manager', limit: 5 });
    expect(plain.map((r) => r.title).sort()).toEqual(['Leave', 'Leave > Sick leave']);
  });

  it('finds nothing for a question of stop words only, and limits the results', async () => {
    expect(await searchKnowledgeBase(db, 'default', kb, { query: 'what is the', limit: 5 })).toEqual([]);
    expect(await searchKnowledgeBase(db, 'default', kb, { query: 'leave receipt laptop', limit: 2 })).toHaveLength(2);
  });

  it('replaces a document of the same name whole', async () => {
    const replaced = await putDocument(db, 'default', kb, {
      name: 'handbook.md',
      contentType: 'text/markdown',
      bytes: 50,
      chunks: [{ title: 'Leave', text: 'Every employee has 30 days of annual leave.' }],
    });
    expect(replaced.chunkCount).toBe(1);
    const docs = await listDocuments(db, 'default', kb);
    expect(docs.map((d) => [d.name, d.chunkCount])).toEqual([['handbook.md', 1]]);
    const results = await searchKnowledgeBase(db, 'default', kb, { query: 'annual leave receipt', limit: 5 });
    expect(results.map((r) => r.text)).toEqual(['Every employee has 30 days of annual leave.']);
    expect((await getKnowledgeBase(db, 'default', kb)).chunkCount).toBe(1);
    await deleteDocument(db, 'default', kb, replaced.id);
    expect(await searchKnowledgeBase(db, 'default', kb, { query: 'annual leave', limit: 5 })).toEqual([]);
    await expect(deleteDocument(db, 'default', kb, replaced.id)).rejects.toMatchObject({
      code: 'api:knowledge:document-not-found',
    });
  });

  it('keeps a knowledge base to its namespace, refuses a taken name and an unknown language', async () => {
    await expect(searchKnowledgeBase(db, 'other', kb, { query: 'leave', limit: 5 })).rejects.toMatchObject({
      code: 'api:knowledge:not-found',
    });
    await expect(
      putDocument(db, 'other', kb, { name: 'x.md', contentType: 'text/markdown', bytes: 1, chunks: handbook }),
    ).rejects.toMatchObject({ code: 'api:knowledge:not-found' });
    expect(await listKnowledgeBases(db, 'other')).toEqual([]);
    await expect(createKnowledgeBase(db, 'default', { name: 'handbook' })).rejects.toMatchObject({
      code: 'api:knowledge:exists',
    });
    await expect(createKnowledgeBase(db, 'default', { name: 'x', language: 'klingon' })).rejects.toMatchObject({
      code: 'api:knowledge:language-unknown',
    });
    const french = await createKnowledgeBase(db, 'default', { name: 'manuel', language: 'french' });
    await putDocument(db, 'default', french.id, {
      name: 'conges.md',
      contentType: 'text/markdown',
      bytes: 10,
      chunks: [{ title: 'Congés', text: 'Les salariés ont droit à vingt-cinq jours de congés payés.' }],
    });
    const found = await searchKnowledgeBase(db, 'default', french.id, { query: 'combien de congé payé ?', limit: 5 });
    expect(found.map((r) => r.document.name)).toEqual(['conges.md']);
    await deleteKnowledgeBase(db, 'default', french.id);
    await expect(searchKnowledgeBase(db, 'default', french.id, { query: 'congé', limit: 5 })).rejects.toMatchObject({
      code: 'api:knowledge:not-found',
    });
  });
  it('ranks within the chunks that hold the most words of the query, and still finds a quoted phrase', async () => {
    const many = (await createKnowledgeBase(db, 'default', { name: 'many' })).id;
    // 40 chunks hold one word of the query, 10 hold three ("annual", "carry", "leave"), one holds the phrase.
    const chunks = [
      ...Array.from({ length: 40 }, (_, i) => ({ title: '', text: `Leave rule number ${i}.` })),
      ...Array.from({ length: 10 }, (_, i) => ({ title: '', text: `Annual leave: carry ${i} days at most.` })),
      { title: 'Best', text: 'Annual leave you carry over is the leave you carry: annual, annual, carry.' },
      { title: '', text: 'Sick leave needs a note.' },
    ];
    await putDocument(db, 'default', many, { name: 'rules.md', contentType: 'text/markdown', bytes: 1, chunks });
    const top = await searchKnowledgeBase(db, 'default', many, { query: 'Can I carry annual leave?', limit: 3 });
    expect(top.map((r) => r.position)).toHaveLength(3);
    expect(top[0].title).toBe('Best');
    expect(top.slice(1).every((r) => r.text.startsWith('Annual leave: carry'))).toBe(true);
    // "sick leave" as a phrase scores 2 more than its words: found though it holds fewer words than ten others.
    const phrase = await searchKnowledgeBase(db, 'default', many, {
      query: '"sick leave" annual carry',
      limit: 2,
    });
    expect(phrase[0].text).toBe('Sick leave needs a note.');
    // A one-word query ranks every chunk that holds it (51 of them here, under the bound of scored candidates).
    const one = await searchKnowledgeBase(db, 'default', many, { query: 'leave', limit: 100 });
    expect(one).toHaveLength(52);
    await deleteKnowledgeBase(db, 'default', many);
  });

  it('finds the nearest vectors exactly, in one knowledge base, skipping other dimensions', async () => {
    const vectors = (await createKnowledgeBase(db, 'default', { name: 'vectors' })).id;
    const other = (await createKnowledgeBase(db, 'default', { name: 'vectors-other' })).id;
    const chunks = Array.from({ length: 6 }, (_, i) => ({ title: '', text: `passage ${i}` }));
    const doc = await putDocument(db, 'default', vectors, {
      name: 'v.md',
      contentType: 'text/markdown',
      bytes: 1,
      chunks,
      embedding: true,
    });
    const otherDoc = await putDocument(db, 'default', other, {
      name: 'o.md',
      contentType: 'text/markdown',
      bytes: 1,
      chunks: [{ title: '', text: 'elsewhere' }],
      embedding: true,
    });
    const angle = (a: number) => [Math.cos(a), Math.sin(a), 0];
    await storeEmbeddings(db, [
      ...[0, 1, 2, 3].map((position) => ({ documentId: doc.id, position, vector: angle(position * 0.4) })),
      { documentId: doc.id, position: 4, vector: [1, 0] },
      { documentId: otherDoc.id, position: 0, vector: angle(0.1) },
    ]);
    const query = angle(0.5);
    const found = await exactVectorSearch.nearest(db, vectors, query, 3);
    expect(found.map((hit) => hit.position)).toEqual([1, 2, 0]);
    const dot = (v: number[]) => v.reduce((sum, x, i) => sum + x * query[i], 0);
    for (const hit of found) expect(hit.similarity).toBeCloseTo(dot(angle(hit.position * 0.4)), 5);
    expect(found[0]).toMatchObject({ documentName: 'v.md', text: 'passage 1' });
    // Position 4 (two dimensions) and 5 (no vector yet) are never compared; the other knowledge base is not read.
    expect((await exactVectorSearch.nearest(db, vectors, query, 10)).map((hit) => hit.position).sort()).toEqual([
      0, 1, 2, 3,
    ]);
    await deleteKnowledgeBase(db, 'default', vectors);
    await deleteKnowledgeBase(db, 'default', other);
  });

  it('detects that this database has no pgvector and takes the exact path', async () => {
    const support = await detectVectorSupport(db);
    // Neither PostgreSQL 15 from Debian here nor PGlite ships the extension.
    expect(support).toEqual({ available: false, installed: false });
    expect(chooseVectorSearch(support).kind).toBe('exact');
    expect(chooseVectorSearch({ available: true, installed: false }).kind).toBe('exact');
    expect(chooseVectorSearch({ available: true, installed: true }).kind).toBe('pgvector');
    // The pgvector query names the dimension in its cast and in the predicate of the HNSW index it is meant for.
    const sql = pgvectorSql(1536);
    expect(sql).toContain('ORDER BY (c.embedding::vector(1536)) <#> $2::real[]::vector(1536)');
    expect(sql).toContain('array_length(c.embedding, 1) = 1536');
    expect(() => pgvectorSql(0)).toThrow(RangeError);
    // Without the extension that query cannot run: the type is unknown, which is why the exact path is chosen.
    await expect(db.query(sql, [kb, '{1}', 1])).rejects.toThrow();
  });
});
