import { randomBytes } from 'node:crypto';
import {
  bindIdempotentAnswer,
  bindIdempotentEffect,
  claimIdempotencyKey,
  completeIdempotencyKey,
  createNamespace,
  createPgDb,
  type Db,
  type IdempotencyScope,
  migrate,
  IDEMPOTENCY_LEASE_SECONDS,
  releaseIdempotencyKey,
  renewIdempotencyKey,
  withIdempotencyKey,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let database: TestDatabase;
let db: Db;
const secretKey = randomBytes(32);
let n = 0;

function scope(overrides: Partial<IdempotencyScope> = {}): IdempotencyScope {
  n += 1;
  return { namespace: 'idem', apiKeyId: 'key-a', key: `k-${n}`, ...overrides };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function fingerprint(text: string): Buffer {
  return Buffer.from(text.padEnd(32, '.').slice(0, 32));
}

beforeAll(async () => {
  database = await createTestDatabase('mt_store_idem', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
  await createNamespace(db, 'idem');
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('Idempotency-Key records', () => {
  it('the first claim runs; a second one while in progress is told so; after completion it gets the answer', async () => {
    const s = scope();
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toMatchObject({ kind: 'claimed' });
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({ kind: 'in-progress' });
    const answer = { status: 201, contentType: 'application/json; charset=utf-8', body: '{"id":"x"}' };
    await completeIdempotencyKey(db, secretKey, s, answer);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({ kind: 'replay', answer });
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('b'))).toEqual({ kind: 'reused' });
  });

  it('a released key can be claimed again', async () => {
    const s = scope();
    await claimIdempotencyKey(db, secretKey, s, fingerprint('a'));
    await releaseIdempotencyKey(db, s);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('b'))).toMatchObject({ kind: 'claimed' });
  });

  it('of many concurrent claims of one key exactly one wins', async () => {
    const s = scope();
    const claims = await Promise.all(
      Array.from({ length: 8 }, () => claimIdempotencyKey(db, secretKey, s, fingerprint('a'))),
    );
    expect(claims.filter((c) => c.kind === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.kind === 'in-progress')).toHaveLength(7);
  });

  it('the same key of another API key is a separate record', async () => {
    const s = scope();
    await claimIdempotencyKey(db, secretKey, s, fingerprint('a'));
    const other = { ...s, apiKeyId: 'platform-token' };
    expect(await claimIdempotencyKey(db, secretKey, other, fingerprint('a'))).toMatchObject({ kind: 'claimed' });
  });

  it('a sealed answer moved to another key does not decrypt', async () => {
    const s = scope();
    await claimIdempotencyKey(db, secretKey, s, fingerprint('a'));
    await completeIdempotencyKey(db, secretKey, s, { status: 200, body: 'secret answer' });
    const moved = scope();
    await db.query(
      'INSERT INTO mt_idempotency_keys (namespace, api_key_id, idem_key, fingerprint, status, iv, ciphertext, tag) ' +
        'SELECT namespace, api_key_id, $2, fingerprint, status, iv, ciphertext, tag FROM mt_idempotency_keys ' +
        'WHERE idem_key = $1',
      [s.key, moved.key],
    );
    await expect(claimIdempotencyKey(db, secretKey, moved, fingerprint('a'))).rejects.toThrow();
  });

  it('a record older than 24 hours is replaced by a new claim', async () => {
    const s = scope();
    await claimIdempotencyKey(db, secretKey, s, fingerprint('a'));
    await completeIdempotencyKey(db, secretKey, s, { status: 200, body: 'old' });
    await db.query("UPDATE mt_idempotency_keys SET created_at = now() - interval '25 hours' WHERE idem_key = $1", [
      s.key,
    ]);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('b'))).toMatchObject({ kind: 'claimed' });
  });

  it('a claim purges every expired record of its namespace, and keeps the fresh ones', async () => {
    const old = scope({ apiKeyId: 'key-old' });
    const fresh = scope({ apiKeyId: 'key-old' });
    for (const s of [old, fresh]) {
      await claimIdempotencyKey(db, secretKey, s, fingerprint('x'));
      await completeIdempotencyKey(db, secretKey, s, { status: 200, body: 'x' });
    }
    await db.query("UPDATE mt_idempotency_keys SET created_at = now() - interval '25 hours' WHERE idem_key = $1", [
      old.key,
    ]);
    await claimIdempotencyKey(db, secretKey, scope({ apiKeyId: 'key-other' }), fingerprint('y'));
    const { rows } = await db.query<{ idem_key: string }>(
      'SELECT idem_key FROM mt_idempotency_keys WHERE idem_key = ANY($1)',
      [[old.key, fresh.key]],
    );
    expect(rows.map((r) => r.idem_key)).toEqual([fresh.key]);
  });

  it('an in-progress record older than the lease (a request that crashed) is taken over by a retry', async () => {
    const s = scope();
    await claimIdempotencyKey(db, secretKey, s, fingerprint('a'));
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({ kind: 'in-progress' });
    await db.query(
      'UPDATE mt_idempotency_keys SET created_at = now() - make_interval(secs => $2) WHERE idem_key = $1',
      [s.key, IDEMPOTENCY_LEASE_SECONDS + 5],
    );
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toMatchObject({ kind: 'claimed' });
    // The new holder's lease is fresh: one more retry waits again.
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({ kind: 'in-progress' });
  });

  it('an in-progress record younger than the lease is still in progress', async () => {
    const s = scope();
    await claimIdempotencyKey(db, secretKey, s, fingerprint('a'));
    await db.query(
      'UPDATE mt_idempotency_keys SET created_at = now() - make_interval(secs => $2) WHERE idem_key = $1',
      [s.key, IDEMPOTENCY_LEASE_SECONDS - 30],
    );
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({ kind: 'in-progress' });
  });

  it('outlasts the longest request: the gateway deadline of 100 s plus 2 minutes', () => {
    expect(IDEMPOTENCY_LEASE_SECONDS).toBe(220);
  });

  it('a stale holder that finishes after the takeover neither answers for nor releases the new holder', async () => {
    const s = scope();
    const stale = await claimIdempotencyKey(db, secretKey, s, fingerprint('a'));
    await db.query(
      'UPDATE mt_idempotency_keys SET created_at = now() - make_interval(secs => $2) WHERE idem_key = $1',
      [s.key, IDEMPOTENCY_LEASE_SECONDS + 5],
    );
    const taken = await claimIdempotencyKey(db, secretKey, s, fingerprint('a'));
    expect(stale.kind === 'claimed' && taken.kind === 'claimed' && stale.token !== taken.token).toBe(true);
    if (stale.kind !== 'claimed' || taken.kind !== 'claimed') return;
    await completeIdempotencyKey(db, secretKey, s, { status: 200, body: 'stale' }, stale.token);
    await releaseIdempotencyKey(db, s, stale.token);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({ kind: 'in-progress' });
    await completeIdempotencyKey(db, secretKey, s, { status: 201, body: 'fresh' }, taken.token);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({
      kind: 'replay',
      answer: { status: 201, body: 'fresh' },
    });
  });
  it('a renewed claim is not taken over once its first lease is past, and keeps its token', async () => {
    const s = scope();
    const lease = 0.5;
    const claim = await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), lease);
    if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
    await sleep(300);
    // A renewal extends the lease and keeps the token: the effect transaction of a request fences on it (0102).
    expect(await renewIdempotencyKey(db, s, claim.token)).toBe(claim.token);
    await sleep(300);
    // 0.6 s after the claim, 0.3 s after the renewal: the first lease is over, the renewed one is not.
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), lease)).toEqual({ kind: 'in-progress' });
    await completeIdempotencyKey(db, secretKey, s, { status: 201, body: 'renewed' }, claim.token);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), lease)).toEqual({
      kind: 'replay',
      answer: { status: 201, body: 'renewed' },
    });
    // A completed record has no lease left to renew.
    expect(await renewIdempotencyKey(db, s, claim.token)).toBeUndefined();
  });

  it('a claim that was taken over renews nothing', async () => {
    const s = scope();
    const stale = await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), 0.2);
    await sleep(300);
    const taken = await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), 0.2);
    if (stale.kind !== 'claimed' || taken.kind !== 'claimed') throw new Error('not claimed twice');
    expect(await renewIdempotencyKey(db, s, stale.token)).toBeUndefined();
    const { rows } = await db.query<{ token: string }>(
      'SELECT created_at::text AS token FROM mt_idempotency_keys WHERE idem_key = $1',
      [s.key],
    );
    expect(rows[0].token).toBe(taken.token);
  });
});

// Decision 0102: the key and the effect commit together.
describe('an effect bound to its Idempotency-Key', () => {
  const effect = { kind: 'run' as const, id: 'run-1', status: 201 };
  async function claimed(s: IdempotencyScope, lease = IDEMPOTENCY_LEASE_SECONDS): Promise<string> {
    const claim = await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), lease);
    if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
    return claim.token;
  }
  const count = async (s: IdempotencyScope) =>
    (await db.query('SELECT 1 FROM mt_idempotency_keys WHERE idem_key = $1', [s.key])).rows.length;

  it('commits with the effect: a retry, after the lease too, gets the effect and never the key', async () => {
    const s = scope();
    const token = await claimed(s, 0.2);
    await withIdempotencyKey({ scope: s, token, secretKey }, () =>
      db.transaction((tx) => bindIdempotentEffect(tx, effect)),
    );
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), 0.2)).toEqual({ kind: 'effect', effect });
    await sleep(300);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), 0.2)).toEqual({ kind: 'effect', effect });
    // Another request with the key is still refused.
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('b'), 0.2)).toEqual({ kind: 'reused' });
    // A release after a failure that came later (the answer's record, say) leaves the record: the effect happened.
    await releaseIdempotencyKey(db, s, token);
    expect(await count(s)).toBe(1);
  });

  it('rolls back with the effect: the key is then released and claimed again', async () => {
    const s = scope();
    const token = await claimed(s);
    await expect(
      withIdempotencyKey({ scope: s, token, secretKey }, () =>
        db.transaction(async (tx) => {
          await bindIdempotentEffect(tx, effect);
          throw new Error('the effect failed');
        }),
      ),
    ).rejects.toThrow('the effect failed');
    await releaseIdempotencyKey(db, s, token);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toMatchObject({ kind: 'claimed' });
  });

  it('fences: a holder whose key was taken over after its lease commits nothing', async () => {
    const s = scope();
    const stale = await claimed(s, 0.2);
    await sleep(300);
    const taken = await claimed(s, 0.2);
    const marker = `fence-${s.key}`;
    await expect(
      withIdempotencyKey({ scope: s, token: stale, secretKey }, () =>
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO mt_namespaces (name) VALUES ($1)', [marker]);
          await bindIdempotentEffect(tx, effect);
        }),
      ),
    ).rejects.toMatchObject({ code: 'api:store:idempotency-key-lost' });
    expect((await db.query('SELECT 1 FROM mt_namespaces WHERE name = $1', [marker])).rows).toEqual([]);
    // The holder that took it over binds its own.
    await withIdempotencyKey({ scope: s, token: taken, secretKey }, () =>
      db.transaction((tx) => bindIdempotentEffect(tx, { ...effect, id: 'run-2' })),
    );
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'), 0.2)).toEqual({
      kind: 'effect',
      effect: { ...effect, id: 'run-2' },
    });
  });

  it('a release that waits on the effect transaction finds its effect and leaves the record', async () => {
    const s = scope();
    const token = await claimed(s);
    let bound!: () => void;
    const isBound = new Promise<void>((resolve) => {
      bound = resolve;
    });
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => {
      commit = resolve;
    });
    const effectTx = withIdempotencyKey({ scope: s, token, secretKey }, () =>
      db.transaction(async (tx) => {
        await bindIdempotentEffect(tx, effect);
        bound();
        await committing;
      }),
    );
    await isBound;
    const release = releaseIdempotencyKey(db, s, token);
    await sleep(100);
    commit();
    await Promise.all([effectTx, release]);
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({ kind: 'effect', effect });
  });

  it('outside a keyed request does nothing and sends nothing', async () => {
    let statements = 0;
    await db.transaction(async (tx) => {
      const counted = {
        ...tx,
        query: (...args: Parameters<typeof tx.query>) => {
          statements++;
          return tx.query(...args);
        },
      };
      await bindIdempotentEffect(counted, effect);
      await bindIdempotentAnswer(counted, { status: 204, body: '' });
    });
    expect(statements).toBe(0);
  });

  it('an answer bound in the transaction is replayed at once', async () => {
    const s = scope();
    const token = await claimed(s);
    const answer = { status: 201, contentType: 'application/json; charset=utf-8', body: '{"key":"mt_once"}' };
    await withIdempotencyKey({ scope: s, token, secretKey }, () =>
      db.transaction((tx) => bindIdempotentAnswer(tx, answer)),
    );
    expect(await claimIdempotencyKey(db, secretKey, s, fingerprint('a'))).toEqual({ kind: 'replay', answer });
  });
});
