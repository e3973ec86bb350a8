import { readFile, rm } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../../test/e2e/support/harness.js';
import { loadDocument } from '../src/internal/openapi/load.js';
import { run } from '../src/program.js';

// `mt import openapi URL` against a local fastify: the document, a relative server resolved against the URL, and
// the limits (5 redirects, 10 MiB, a stalled answer), each a clear error.
let app: FastifyInstance;
let other: FastifyInstance;
let base: string;
let otherBase: string;
let scratch: string;
const stalled: PassThrough[] = [];
let otherHits = 0;

async function mt(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(['node', 'mt', ...args], {
    out: (t) => {
      stdout += `${t}\n`;
    },
    err: (t) => {
      stderr += `${t}\n`;
    },
  });
  return { code, stdout, stderr };
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'mt-import-url-'));
  const relative = await readFile(join(ROOT, 'test/fixtures/openapi/hand/relative-server.yaml'), 'utf8');
  app = Fastify({ forceCloseConnections: true });
  app.get('/specs/relative.yaml', async (_req, reply) => reply.type('application/yaml').send(relative));
  // /hop/N redirects to /hop/N-1, and /hop/0 is the document: /hop/5 is five redirects, /hop/6 six.
  app.get<{ Params: { n: string } }>('/hop/:n', async (req, reply) => {
    const n = Number(req.params.n);
    if (n === 0) return reply.type('application/yaml').send(relative);
    return reply.redirect(`/hop/${n - 1}`, 302);
  });
  // 11 MiB, streamed without a Content-Length, so only counting what arrives can stop it.
  app.get('/big.yaml', async (_req, reply) => {
    const body = new PassThrough();
    reply.type('application/yaml').send(body);
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    (async () => {
      for (let i = 0; i < 11; i++) {
        if (!body.write(chunk)) await new Promise((resolve) => body.once('drain', resolve));
      }
      body.end();
    })().catch(() => {});
    return reply;
  });
  // 11 MiB announced by Content-Length: refused before the body is read.
  app.get('/announced.yaml', async (_req, reply) => {
    return reply
      .type('application/yaml')
      .header('content-length', String(11 * 1024 * 1024))
      .send(Buffer.alloc(11 * 1024 * 1024, 0x20));
  });
  // Headers and a first line, then nothing.
  app.get('/stall.yaml', async (_req, reply) => {
    const body = new PassThrough();
    stalled.push(body);
    body.write('openapi: 3.1.0\n');
    return reply.type('application/yaml').send(body);
  });
  // The split document (test/fixtures/openapi/hand/split): relative $refs resolve against each file's URL.
  const split = join(ROOT, 'test/fixtures/openapi/hand/split');
  for (const file of ['openapi.yaml', 'parameters.yaml', 'schemas/event.yaml', 'paths/events.yaml']) {
    const text = await readFile(join(split, file), 'utf8');
    app.get(`/split/${file}`, async (_req, reply) => reply.type('application/yaml').send(text));
  }
  // "Another host": a second server on another port of 127.0.0.1, serving the same schema.
  const eventSchema = await readFile(join(split, 'schemas/event.yaml'), 'utf8');
  other = Fastify({ forceCloseConnections: true });
  other.addHook('onRequest', async () => {
    otherHits++;
  });
  other.get('/schemas/event.yaml', async (_req, reply) => reply.type('application/yaml').send(eventSchema));
  otherBase = await other.listen({ port: 0, host: '127.0.0.1' });
  const pointingAt = (schemaUrl: string) => `openapi: 3.1.0
info: { title: Elsewhere API, version: 1.0.0 }
servers: [{ url: https://elsewhere.example.com }]
paths:
  /events:
    get:
      operationId: listEvents
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                $ref: '${schemaUrl}#/Event'
`;
  app.get('/specs/other-port.yaml', async (_req, reply) =>
    reply.type('application/yaml').send(pointingAt(`${otherBase}/schemas/event.yaml`)),
  );
  app.get('/specs/other-name.yaml', async (_req, reply) =>
    reply
      .type('application/yaml')
      .send(pointingAt(`${base.replace('127.0.0.1', 'localhost')}/split/schemas/event.yaml`)),
  );
  // A $ref on this origin that redirects to the other server: never followed (issue #41 item 6).
  app.get('/redirect-out/event.yaml', async (_req, reply) => reply.redirect(`${otherBase}/schemas/event.yaml`, 302));
  app.get('/specs/redirect-out.yaml', async (_req, reply) =>
    reply.type('application/yaml').send(pointingAt('../redirect-out/event.yaml')),
  );
  app.get('/specs/missing-ref.yaml', async (_req, reply) =>
    reply.type('application/yaml').send(pointingAt('../split/schemas/nope.yaml')),
  );
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  for (const body of stalled) body.destroy();
  await app?.close();
  await other?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('mt import openapi from a URL', { timeout: 60_000 }, () => {
  it('imports it, resolving a relative server against the URL, through up to 5 redirects', async () => {
    const out = join(scratch, 'ok');
    const direct = await mt(['import', 'openapi', `${base}/specs/relative.yaml`, '--out', out, '--json']);
    expect(direct.code, direct.stderr).toBe(0);
    const connector = await readFile(join(out, 'connectors/open-api/relative-api-ping.mtr'), 'utf8');
    expect(connector).toContain(`url = "${base}/api/v3/ping"`);
    const record = JSON.parse(await readFile(join(out, '.mt-import/relative-api.json'), 'utf8'));
    expect(record.source).toBe(`${base}/specs/relative.yaml`);
    const five = await mt(['import', 'openapi', `${base}/hop/5`, '--out', join(scratch, 'five')]);
    expect(five.code, five.stderr).toBe(0);
    // The server resolves against where the document was found, after the redirects.
    expect(await readFile(join(scratch, 'five/connectors/open-api/relative-api-ping.mtr'), 'utf8')).toContain(
      `url = "${base}/api/v3/ping"`,
    );
  });

  it('refuses 6 redirects', async () => {
    const result = await mt(['import', 'openapi', `${base}/hop/6`, '--out', join(scratch, 'six')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `error [api:import:too-many-redirects]: ${base}/hop/6 redirected more than 5 times`,
    );
  });

  it('refuses 11 MiB, announced or only counted as it arrives', async () => {
    for (const path of ['/big.yaml', '/announced.yaml']) {
      const result = await mt(['import', 'openapi', `${base}${path}`, '--out', join(scratch, 'big')]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `error [api:import:source-too-large]: the OpenAPI document at ${base}${path} is larger than 10 MiB`,
      );
    }
  });

  it('gives up on a stalled answer when the time is up (30 s for mt; 1 s here)', async () => {
    const started = Date.now();
    await expect(
      loadDocument(`${base}/stall.yaml`, { maxBytes: 10 * 1024 * 1024, timeoutMs: 1000, maxRedirects: 5 }),
    ).rejects.toMatchObject({
      code: 'api:import:source-timeout',
      message: `the OpenAPI document at ${base}/stall.yaml did not arrive within 1 seconds`,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('follows relative $refs against the URL of the file they are written in', async () => {
    const out = join(scratch, 'split');
    const result = await mt(['import', 'openapi', `${base}/split/openapi.yaml`, '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    const create = await readFile(join(out, 'connectors/open-api/split-api-create-event.mtr'), 'utf8');
    // paths/events.yaml refers to ../schemas/event.yaml, whose Event refers to #/Place of its own file.
    expect(create).toContain('city = {');
    const get = await readFile(join(out, 'connectors/open-api/split-api-get-event.mtr'), 'utf8');
    expect(get).toContain('description = "The id of the event"');
    // The same files as from the file system: only the source named in the comments differs.
    const fromFile = join(scratch, 'split-file');
    const file = await mt(['import', 'openapi', 'test/fixtures/openapi/hand/split/openapi.yaml', '--out', fromFile]);
    expect(file.code, file.stderr).toBe(0);
    expect(create.replace(`${base}/split/openapi.yaml`, 'SOURCE')).toBe(
      (await readFile(join(fromFile, 'connectors/open-api/split-api-create-event.mtr'), 'utf8')).replace(
        'test/fixtures/openapi/hand/split/openapi.yaml',
        'SOURCE',
      ),
    );
  });

  it('refuses a $ref to another host (another port, another host name): exit 2, the code and the pointer', async () => {
    for (const [doc, ref] of [
      ['other-port', `${otherBase}/schemas/event.yaml#/Event`],
      ['other-name', `${base.replace('127.0.0.1', 'localhost')}/split/schemas/event.yaml#/Event`],
    ] as const) {
      const out = join(scratch, doc);
      const result = await mt(['import', 'openapi', `${base}/specs/${doc}.yaml`, '--out', out]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `error [api:import:ref-external]: ${base}/specs/${doc}.yaml has a $ref to another host (${ref}) at /paths/~1events/get/responses/200/content/application~1json/schema/$ref`,
      );
      await expect(readFile(join(out, '.mt-import/elsewhere-api.json'))).rejects.toThrow();
    }
  });

  it("does not follow a $ref's redirect off the document's origin: exit 2, the other host never asked", async () => {
    const hits = otherHits;
    const out = join(scratch, 'redirect-out');
    const result = await mt(['import', 'openapi', `${base}/specs/redirect-out.yaml`, '--out', out]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `error [api:import:ref-outside]: ${base}/specs/redirect-out.yaml has a $ref outside what it may read (../redirect-out/event.yaml#/Event) at /paths/~1events/get/responses/200/content/application~1json/schema/$ref: it redirects to ${otherBase}/schemas/event.yaml`,
    );
    expect(otherHits).toBe(hits);
    await expect(readFile(join(out, '.mt-import/elsewhere-api.json'))).rejects.toThrow();
  });

  it('says which $ref cannot be read', async () => {
    const result = await mt(['import', 'openapi', `${base}/specs/missing-ref.yaml`, '--out', join(scratch, 'nope')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'error [api:import:ref-unreadable]: cannot read ../split/schemas/nope.yaml#/Event, referred to at /paths/~1events/get/responses/200/content/application~1json/schema/$ref',
    );
    expect(result.stderr).toContain(`${base}/split/schemas/nope.yaml answered 404 Not Found`);
  });
});
