// node bench/quota-check.js — what a namespace quota's check costs as the namespace's runs of the day grow (docs/limits.md
// "Quotas", decision 0345): the read of a namespace without quotas, and the tool-call and token checks of one with
// them, against 100, 1,000 and 10,000 runs of the day with four tool results each, on PostgreSQL (mean of 30 after 5
// warm-ups). Prints only. Needs `npm run build` and PostgreSQL at 127.0.0.1:5432 (MT_TEST_PG_URL).
import { randomUUID } from 'node:crypto';
import {
  createNamespace,
  createPgDb,
  getNamespaceQuotas,
  migrate,
  setNamespaceQuotas,
  tokenQuotaRefusal,
  toolCallQuotaRefusal,
} from '../packages/store/dist/index.js';
import { createTestDatabase } from '../packages/testkit/dist/index.js';

const database = await createTestDatabase('mt_bench_quotas', { migrated: true });
const db = createPgDb(database.url);
try {
  await migrate(db);
  await createNamespace(db, 'b');
  const quotas = { runsPerDay: 1e9, toolCallsPerDay: 1e9, tokensPerMonth: 1e12 };
  await setNamespaceQuotas(db, 'b', quotas);
  const time = async (f) => {
    for (let i = 0; i < 5; i++) await f();
    const begin = performance.now();
    for (let i = 0; i < 30; i++) await f();
    return ((performance.now() - begin) / 30).toFixed(2);
  };
  let runs = 0;
  for (const target of [100, 1000, 10000]) {
    while (runs < target) {
      const ids = Array.from({ length: Math.min(500, target - runs) }, () => randomUUID());
      await db.query(
        'INSERT INTO mt_runs (id, namespace, interaction, interaction_version, versions, inputs, interactive, status, ' +
          "last_seq, input_tokens, output_tokens) SELECT x, 'b', 'i', 1, '{}', '{}', false, 'Completed', 5, 300, 100 " +
          'FROM unnest($1::uuid[]) x',
        [ids],
      );
      await db.query(
        "INSERT INTO mt_run_events (run_id, seq, type, data) SELECT x, s, 'tool-result', " +
          "json_build_object('name', 'a', 'code', null) FROM unnest($1::uuid[]) x, generate_series(1, 4) s",
        [ids],
      );
      runs += ids.length;
    }
    await db.query('ANALYZE mt_runs');
    await db.query('ANALYZE mt_run_events');
    const none = await time(() => getNamespaceQuotas(db, 'nobody'));
    const calls = await time(() => toolCallQuotaRefusal(db, 'b', quotas));
    const tokens = await time(() => tokenQuotaRefusal(db, 'b', quotas));
    console.log(
      `${runs} runs today (${runs * 4} tool results): no quota ${none} ms, tool-call check ${calls} ms, token check ${tokens} ms`,
    );
  }
} finally {
  await db.close();
  await database.drop();
}
