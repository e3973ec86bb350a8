import { randomBytes } from 'node:crypto';
import {
  createConnectLink,
  createKeyring,
  createNamespace,
  createPgDb,
  type Db,
  findConnectionForCall,
  deleteOAuthClient,
  findOAuthClient,
  masterKeyId,
  migrate,
  readConnectionTokens,
  REFRESH_BUSY,
  refreshConnection,
  registerOAuthClientOnce,
  reserveConnection,
  rotateSecretKeys,
  saveConnection,
  secretKeyStatus,
  useConnectLink,
} from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Connections' tokens and connect links' PKCE verifiers are sealed like secrets: bound to their row, re-wrapped by a
// master key rotation, opened with the new key only afterwards.
let database: TestDatabase;
let db: Db;
const oldKey = randomBytes(32);
const newKey = randomBytes(32);

beforeAll(async () => {
  database = await createTestDatabase('mt_store_connections', { migrated: true });
  db = createPgDb(database.url);
  await migrate(db);
  await createNamespace(db, 'a');
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('sealed connections and connect links', () => {
  it('stores tokens sealed, replaces them on re-authorisation, and a rotation re-wraps them with the links', async () => {
    const tokens = { accessToken: `at-${randomBytes(8).toString('hex')}`, refreshToken: 'rt-1', tokenType: 'bearer' };
    const made = await saveConnection(db, oldKey, 'a', {
      provider: 'p',
      endUser: 'u',
      scopes: ['s'],
      tokens,
      expiresAt: null,
    });
    const { rows } = await db.query<{ row: string }>('SELECT c::text AS row FROM mt_connections c');
    expect(rows[0]?.row).not.toContain(tokens.accessToken);
    expect(await readConnectionTokens(db, oldKey, 'a', made.id)).toEqual(tokens);
    const again = await saveConnection(db, oldKey, 'a', {
      provider: 'p',
      endUser: 'u',
      scopes: ['s', 't'],
      tokens: { accessToken: 'at-2', tokenType: 'bearer' },
      expiresAt: null,
    });
    expect(again).toMatchObject({ id: made.id, scopes: ['s', 't'], hasRefreshToken: false, status: 'Active' });
    await createConnectLink(db, oldKey, 'a', {
      provider: 'p',
      providerVersion: 1,
      endUser: 'v',
      scopes: [],
      redirectUri: 'https://mt.example/v1/connections/callback',
      state: 'state-1',
      codeVerifier: 'verifier-1',
      createdBy: null,
      expiresAt: new Date(Date.now() + 60_000),
    });
    // A client registered dynamically (RFC 7591): its secret sealed, re-wrapped by the rotation too.
    const clientKey = { namespace: 'a', issuer: 'https://as.example', redirectUri: 'https://mt.example/cb' };
    await registerOAuthClientOnce(db, oldKey, clientKey, async () => ({
      clientId: 'registered-1',
      clientSecret: 'registered-secret-1',
      registrationAccessToken: 'registration-token-1',
      registrationClientUri: 'https://as.example/reg/registered-1',
      tokenAuthMethod: 'client_secret_basic',
    }));
    const { rows: clients } = await db.query<{ row: string }>('SELECT c::text AS row FROM mt_oauth_clients c');
    expect(clients[0]?.row).not.toContain('registered-secret-1');
    expect(clients[0]?.row).not.toContain('registration-token-1');

    const ring = createKeyring(newKey, [oldKey]);
    expect((await secretKeyStatus(db, ring)).secretsByKeyId).toEqual({ [masterKeyId(oldKey)]: 3 });
    const rotation = await rotateSecretKeys(db, ring);
    expect(rotation.rewrapped).toBe(3);
    const reopened = await findOAuthClient(db, newKey, clientKey);
    expect(reopened).toEqual({
      id: expect.any(String),
      clientId: 'registered-1',
      clientSecret: 'registered-secret-1',
      registrationAccessToken: 'registration-token-1',
      registrationClientUri: 'https://as.example/reg/registered-1',
      tokenAuthMethod: 'client_secret_basic',
    });
    // Deleted once its server deleted it (RFC 7592): a new registration is made on next use.
    expect(await deleteOAuthClient(db, 'a', reopened!.id)).toBe(true);
    expect(await findOAuthClient(db, newKey, clientKey)).toBeUndefined();
    await registerOAuthClientOnce(db, newKey, clientKey, async () => ({
      clientId: 'registered-1',
      clientSecret: 'registered-secret-1',
      tokenAuthMethod: 'client_secret_basic',
    }));
    expect(await secretKeyStatus(db, ring)).toMatchObject({
      secretsByKeyId: { [masterKeyId(newKey)]: 3 },
      unusedPreviousKeyIds: [masterKeyId(oldKey)],
    });
    expect(await readConnectionTokens(db, newKey, 'a', made.id)).toEqual({ accessToken: 'at-2', tokenType: 'bearer' });
    expect((await useConnectLink(db, newKey, 'state-1')).codeVerifier).toBe('verifier-1');
    await expect(useConnectLink(db, newKey, 'state-1')).rejects.toMatchObject({ code: 'api:connections:link-used' });
  });

  it('registers a client once for a namespace, issuer and redirect URI, however many ask at once', async () => {
    const key = { namespace: 'a', issuer: 'https://as.example', redirectUri: 'https://mt.example/other' };
    let registrations = 0;
    const register = async () => {
      registrations++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { clientId: `c-${registrations}`, clientSecret: 's', tokenAuthMethod: 'client_secret_basic' };
    };
    const clients = await Promise.all(
      Array.from({ length: 5 }, () => registerOAuthClientOnce(db, newKey, key, register)),
    );
    expect(registrations).toBe(1);
    expect(new Set(clients.map((c) => c.clientId))).toEqual(new Set(['c-1']));
    // Another redirect URI is another client.
    const other = await registerOAuthClientOnce(
      db,
      newKey,
      { ...key, redirectUri: 'https://mt.example/third' },
      register,
    );
    expect(other.clientId).toBe('c-2');
  });

  it('does not open tokens moved to another connection', async () => {
    const one = await saveConnection(db, newKey, 'a', {
      provider: 'p',
      endUser: 'x',
      scopes: [],
      tokens: { accessToken: 'at-x', tokenType: 'bearer' },
      expiresAt: null,
    });
    const two = await saveConnection(db, newKey, 'a', {
      provider: 'p',
      endUser: 'y',
      scopes: [],
      tokens: { accessToken: 'at-y', tokenType: 'bearer' },
      expiresAt: null,
    });
    await db.query(
      'UPDATE mt_connections SET (iv, ciphertext, tag, wrapped_key) = ' +
        '(SELECT iv, ciphertext, tag, wrapped_key FROM mt_connections WHERE id = $1) WHERE id = $2',
      [one.id, two.id],
    );
    await expect(readConnectionTokens(db, newKey, 'a', two.id)).rejects.toMatchObject({
      code: 'api:secrets:decrypt-failed',
    });
  });

  it('keeps one connection whose tokens open when two callbacks for one person store at once', async () => {
    const other = createPgDb(database.url);
    try {
      const save = (on: Db, token: string) =>
        on.transaction((tx) =>
          saveConnection(tx, newKey, 'a', {
            provider: 'p',
            endUser: 'concurrent',
            scopes: [],
            tokens: { accessToken: token, tokenType: 'bearer' },
            expiresAt: null,
          }),
        );
      const [one, two] = await Promise.all([save(db, 'at-one'), save(other, 'at-two')]);
      expect(one.id).toBe(two.id);
      const opened = await readConnectionTokens(db, newKey, 'a', one.id);
      expect(['at-one', 'at-two']).toContain(opened?.accessToken);
    } finally {
      await other.close();
    }
  });

  it('reserves one connection with an expired, empty token for calls at once in two processes, and keeps an existing one', async () => {
    const other = createPgDb(database.url);
    try {
      const reserved = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          reserveConnection(i % 2 ? other : db, newKey, 'a', { provider: 'machine', endUser: '' }),
        ),
      );
      expect(new Set(reserved.map((c) => c.id)).size).toBe(1);
      const first = reserved[0]!;
      expect(first).toMatchObject({ status: 'Active', scopes: [], tokens: { accessToken: '', tokenType: 'Bearer' } });
      expect(first.expiresAt!.getTime()).toBe(0);
      // A connection that exists is answered as it is, its tokens untouched.
      const saved = await saveConnection(db, newKey, 'a', {
        provider: 'machine',
        endUser: '',
        scopes: ['s'],
        tokens: { accessToken: 'at-live', tokenType: 'bearer' },
        expiresAt: null,
      });
      expect(saved.id).toBe(first.id);
      const again = await reserveConnection(db, newKey, 'a', { provider: 'machine', endUser: '' });
      expect(again).toMatchObject({ id: first.id, scopes: ['s'], expiresAt: null, tokens: { accessToken: 'at-live' } });
    } finally {
      await other.close();
    }
  });

  it('refreshes a connection once across processes: the others try the row again, then take the new tokens', async () => {
    const key = randomBytes(32);
    await createNamespace(db, 'r');
    const made = await saveConnection(db, key, 'r', {
      provider: 'p',
      endUser: 'u',
      scopes: ['s'],
      tokens: { accessToken: 'at-old', refreshToken: 'rt-old', tokenType: 'bearer' },
      expiresAt: new Date(Date.now() - 1000),
    });
    // Two pools stand for two processes (each its own connections to the database).
    const other = createPgDb(database.url);
    let refreshes = 0;
    const stale = (c: { expiresAt: Date | null }) => c.expiresAt !== null && c.expiresAt.getTime() < Date.now();
    const refresh = async (c: { tokens: { refreshToken?: string } }) => {
      refreshes++;
      expect(c.tokens.refreshToken).toBe('rt-old');
      await new Promise((resolve) => setTimeout(resolve, 200));
      return {
        tokens: { accessToken: 'at-new', refreshToken: 'rt-new', tokenType: 'bearer' },
        scopes: ['s'],
        expiresAt: new Date(Date.now() + 60_000),
      };
    };
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => refreshConnection(i % 2 ? other : db, key, 'r', made.id, stale, refresh)),
      );
      expect(refreshes).toBe(1);
      for (const result of results)
        expect(result?.tokens).toEqual({ accessToken: 'at-new', refreshToken: 'rt-new', tokenType: 'bearer' });
      expect((await findConnectionForCall(db, key, 'r', 'p', 'u'))?.tokens.refreshToken).toBe('rt-new');
      // A refused refresh token marks the connection; the tokens stay as they were.
      await db.query("UPDATE mt_connections SET access_expires_at = now() - interval '1 second' WHERE id = $1", [
        made.id,
      ]);
      const refused = await refreshConnection(db, key, 'r', made.id, stale, async () => ({ refused: true }));
      expect(refused?.status).toBe('NeedsReauthorization');
      expect(await findConnectionForCall(db, key, 'r', 'p', 'u')).toMatchObject({ status: 'NeedsReauthorization' });
      // A refresh that fails (the provider is down) changes nothing.
      await db.query("UPDATE mt_connections SET status = 'Active' WHERE id = $1", [made.id]);
      await expect(
        refreshConnection(db, key, 'r', made.id, stale, async () => {
          throw new Error('down');
        }),
      ).rejects.toThrow('down');
      expect((await findConnectionForCall(db, key, 'r', 'p', 'u'))?.tokens.accessToken).toBe('at-new');
      // A row held by another transaction (a refresh in another process) past the deadline: busy, nothing called;
      // once the holder ends (commit, rollback, or its connection lost), the next try refreshes.
      await db.query("UPDATE mt_connections SET access_expires_at = now() - interval '1 second' WHERE id = $1", [
        made.id,
      ]);
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked: () => void = () => {};
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = other.transaction(async (tx) => {
        await tx.query('SELECT id FROM mt_connections WHERE id = $1 FOR UPDATE', [made.id]);
        locked();
        await released;
        throw new Error('the holder died');
      });
      await isLocked;
      let called = 0;
      const counted = async () => {
        called++;
        return {
          tokens: { accessToken: 'at-3', refreshToken: 'rt-3', tokenType: 'bearer' },
          scopes: ['s'],
          expiresAt: new Date(Date.now() + 60_000),
        };
      };
      const started = Date.now();
      expect(await refreshConnection(db, key, 'r', made.id, stale, counted, 300)).toBe(REFRESH_BUSY);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(called).toBe(0);
      const waiting = refreshConnection(db, key, 'r', made.id, stale, counted, 5_000);
      await new Promise((resolve) => setTimeout(resolve, 250));
      release();
      await expect(holder).rejects.toThrow('the holder died');
      expect((await waiting) as { tokens: unknown }).toMatchObject({ tokens: { accessToken: 'at-3' } });
      expect(called).toBe(1);
    } finally {
      await other.close();
    }
  });
});
