import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEgressPolicy } from '@maitento/egress';
import { modelsFromEnvironment } from '@maitento/engine';
import { readConfigRepo } from '@maitento/lang';
import { createServer } from '@maitento/server';
import { createPgDb, createPgliteDb, type Db } from '@maitento/store';
import { copyPgliteTemplate, createTestDatabase, freePort } from '@maitento/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auth } from './helpers.js';

// Test 2 of issue #28: the example repo's three file tools (list-files, read-file, write-file, auth = "Maitento")
// in one run of keep-notes, all sharing the one fileSystemId the run binds, played by a scripted model; a second
// run bound to another file system sees nothing of the first, and cannot name the first one itself. The tools
// call this server back over real HTTP with a platform token of the run's namespace. On PostgreSQL and PGlite.
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NOTE_FILES = [
  'connectors/open-api/notes-list-files.mtr',
  'connectors/open-api/notes-read-file.mtr',
  'connectors/open-api/notes-write-file.mtr',
  'external-operations/open-api/list-files.mtr',
  'external-operations/open-api/read-file.mtr',
  'external-operations/open-api/write-file.mtr',
  'agents/note-keeper.mtr',
  'interactions/one-shot/keep-notes.mtr',
];

async function openPg(): Promise<{ db: Db; close(): Promise<void> }> {
  const database = await createTestDatabase('mt_file_tools', { migrated: true });
  const db = createPgDb(database.url);
  return {
    db,
    async close() {
      await db.close();
      await database.drop();
    },
  };
}

async function openPglite(): Promise<{ db: Db; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'mt-file-tools-'));
  await copyPgliteTemplate(join(dir, 'db'));
  const db = await createPgliteDb(join(dir, 'db'));
  return {
    db,
    async close() {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface RunEvent {
  type: string;
  data: Record<string, unknown>;
}

describe.each([
  ['PostgreSQL', openPg],
  ['PGlite', openPglite],
])('the file tools of the example repo on %s', (_driver, open) => {
  const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
  const scriptsDir = mkdtempSync(join(tmpdir(), 'mt-file-tools-scripts-'));
  let app: FastifyInstance;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const opened = await open();
    close = opened.close;
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    app = await createServer({
      db: opened.db,
      secretKey: randomBytes(32),
      egress: createEgressPolicy(),
      bootstrapKey: adminKey,
      platformOrigin: origin,
      logger: false,
      worker: { concurrency: 2 },
      engineOptions: { models: modelsFromEnvironment({ scriptsDir }), modelRetries: 0 },
    });
    await app.listen({ port, host: '127.0.0.1' });
    // The repo's files as they are, but for the server's address (they name mt serve's default) and the model.
    const files = (await readConfigRepo(REPO_ROOT))
      .filter((file) => NOTE_FILES.includes(file.path))
      .map((file) => ({
        path: file.path,
        content: file.content
          .replaceAll('http://127.0.0.1:8080', origin)
          .replace('model = "openai:gpt-4o-mini"', 'model = "scripted:note-keeper"'),
      }));
    expect(files.map((file) => file.path).sort()).toEqual([...NOTE_FILES].sort());
    const deployed = await app.inject({
      method: 'POST',
      url: '/v1/deploy',
      headers: auth(adminKey),
      payload: { files },
    });
    expect(deployed.statusCode, deployed.body).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await close?.();
    await rm(scriptsDir, { recursive: true, force: true });
  });

  async function createFs(name: string): Promise<string> {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/file-systems',
      headers: auth(adminKey),
      payload: { name },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id;
  }

  /** Plays `turns` as the note keeper in one run of keep-notes bound to `fileSystemId`; its tool results. */
  async function run(fileSystemId: string, turns: unknown[]): Promise<RunEvent[]> {
    writeFileSync(join(scriptsDir, 'note-keeper.json'), JSON.stringify(turns));
    const started = await app.inject({
      method: 'POST',
      url: '/v1/interactions/keep-notes/runs',
      headers: auth(adminKey),
      payload: { inputs: { request: 'Note that the boiler is fixed.', fileSystemId }, interactive: false },
    });
    expect(started.statusCode, started.body).toBe(201);
    const id = started.json().id as string;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const status = (await app.inject({ method: 'GET', url: `/v1/runs/${id}`, headers: auth(adminKey) })).json();
      if (status.status !== 'Running') {
        expect(status.status, JSON.stringify(status)).toBe('Completed');
        break;
      }
      if (Date.now() > deadline) throw new Error(`run ${id} still running`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const events = await app.inject({ method: 'GET', url: `/v1/runs/${id}/events`, headers: auth(adminKey) });
    return (events.json() as RunEvent[]).filter((event) => event.type === 'tool-result');
  }

  it('write, list and read back in one run, all in the one bound file system', async () => {
    const first = await createFs('team-notes');
    const results = await run(first, [
      {
        toolCalls: [
          {
            name: 'write-file',
            arguments: { request: { path: 'notes/boiler.md', content: '# Boiler\nFixed on Tuesday.\n' } },
          },
        ],
      },
      { toolCalls: [{ name: 'list-files', arguments: { additionalInputs: { 'query.prefix': 'notes/' } } }] },
      { toolCalls: [{ name: 'read-file', arguments: { additionalInputs: { 'path.path': 'notes/boiler.md' } } }] },
      { text: 'Noted in notes/boiler.md.' },
    ]);
    expect(results.map((r) => [r.data.ok, r.data.status])).toEqual([
      [true, 201],
      [true, 200],
      [true, 200],
    ]);
    expect(String(results[1].data.result)).toContain('notes/boiler.md');
    expect(String(results[2].data.result)).toContain('Fixed on Tuesday.');
    // The file is in the bound file system, as the tool wrote it.
    const file = await app.inject({
      method: 'GET',
      url: `/v1/file-systems/${first}/files/notes/boiler.md`,
      headers: auth(adminKey),
    });
    expect(file.body).toBe('# Boiler\nFixed on Tuesday.\n');

    // A second run, bound to another file system, sees nothing of the first...
    const second = await createFs('other-notes');
    const other = await run(second, [
      { toolCalls: [{ name: 'list-files', arguments: { additionalInputs: { 'query.prefix': '' } } }] },
      { toolCalls: [{ name: 'read-file', arguments: { additionalInputs: { 'path.path': 'notes/boiler.md' } } }] },
      // ...and a model that names the first file system itself is refused before any call is made.
      {
        toolCalls: [
          {
            name: 'read-file',
            arguments: { additionalInputs: { 'path.fileSystemId': first, 'path.path': 'notes/boiler.md' } },
          },
        ],
      },
      { text: 'There are no notes yet.' },
    ]);
    expect(other[0].data).toMatchObject({ ok: true, status: 200 });
    expect(JSON.parse(String(other[0].data.result))).toEqual({ files: [], nextCursor: null });
    expect(other[1].data).toMatchObject({ ok: false, status: 404 });
    expect(String(other[1].data.result)).toContain('api:files:not-found');
    expect(other[2].data).toMatchObject({ ok: false, code: 'api:gateway:argument-bound' });
    expect(String(other[2].data.result)).not.toContain('Fixed on Tuesday.');
    const listed = await app.inject({
      method: 'GET',
      url: `/v1/file-systems/${second}/files`,
      headers: auth(adminKey),
    });
    expect(listed.json().files).toEqual([]);
  });

  it('refuse a .. path from the model at the gateway or the server, with a code, writing nothing', async () => {
    const id = await createFs('guarded-notes');
    const results = await run(id, [
      // A .. in the body's path reaches the server, which refuses it; in a path parameter the gateway does.
      { toolCalls: [{ name: 'write-file', arguments: { request: { path: '../escape.md', content: 'x' } } }] },
      { toolCalls: [{ name: 'read-file', arguments: { additionalInputs: { 'path.path': '../escape.md' } } }] },
      { text: 'I cannot write outside the notes.' },
    ]);
    expect(results[0].data).toMatchObject({ ok: false, status: 400 });
    expect(String(results[0].data.result)).toContain('api:files:path-invalid');
    expect(results[1].data).toMatchObject({ ok: false, code: 'api:gateway:path-invalid' });
    const listed = await app.inject({ method: 'GET', url: `/v1/file-systems/${id}/files`, headers: auth(adminKey) });
    expect(listed.json().files).toEqual([]);
  });
});
