import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { Maitento } from '@maitento/sdk';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kebab } from '../src/internal/openapi/generate.js';
import { run } from '../src/program.js';
import {
  ROOT,
  requireBuiltCli,
  runMt,
  type ServeProcess,
  startServer,
  tempHome,
} from '../../../test/e2e/support/harness.js';

// The real `mt import openapi` on the vendored documents (test/fixtures/openapi/README.md): golden output,
// `mt check` and `mt deploy` of it into a real server on PostgreSQL, the errors, filters and re-imports.
const FIXTURES = 'test/fixtures/openapi';
const GOLDEN = join(ROOT, FIXTURES, 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
let home: string;
let scratch: string;

/**
 * `mt` in this process (the machine is shared: a process costs seconds), from the repo root, so the source paths in
 * the generated comments are the same on every machine. The deploy test runs the real `mt` processes.
 */
async function mt(args: string[]) {
  let stdout = '';
  let stderr = '';
  const line = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);
  const code = await run(['node', 'mt', ...args], {
    out: (text) => {
      stdout += line(text);
    },
    err: (text) => {
      stderr += line(text);
    },
  });
  return { code, stdout, stderr };
}

/** The real `mt` process, from the repo root. */
function mtProcess(args: string[], env: Record<string, string> = {}) {
  return runMt(args, { home, cwd: ROOT, env });
}

async function treeOf(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else files.set(relative(dir, path).split('\\').join('/'), await readFile(path, 'utf8'));
    }
  };
  await walk(dir);
  return files;
}

async function fresh(name: string): Promise<string> {
  const dir = join(scratch, name);
  await rm(dir, { recursive: true, force: true });
  return dir;
}

beforeAll(async () => {
  requireBuiltCli();
  home = await tempHome();
  scratch = await mkdtemp(join(tmpdir(), 'mt-import-openapi-'));
});

/**
 * Issue #41 item 7: a small document whose schemas each refer twice to the next, `levels` deep (L0 → L1 twice → ...),
 * the last a leaf with a required integer. Inlining every `$ref` wrote 2^levels copies (16 s and 16 MB at 16).
 */
function doubling(levels: number, serverUrl = 'https://doubling.example.com'): string {
  const schemas: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) {
    const next = { $ref: `#/components/schemas/L${i + 1}` };
    schemas[`L${i}`] = { type: 'object', additionalProperties: false, properties: { a: next, b: next } };
  }
  schemas[`L${levels}`] = {
    type: 'object',
    required: ['n'],
    additionalProperties: false,
    properties: { n: { type: 'integer' } },
  };
  return JSON.stringify({
    openapi: '3.1.0',
    info: { title: 'Doubling', version: '1' },
    servers: [{ url: serverUrl }],
    paths: {
      '/things': {
        post: {
          operationId: 'makeThing',
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/L0' } } },
          },
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
    components: { schemas },
  });
}

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
  if (home) await rm(home, { recursive: true, force: true });
});

const GOLDEN_CASES: [string, string, string[]][] = [
  ['museum', `${FIXTURES}/museum/openapi.yaml`, []],
  ['swagger-petstore', `${FIXTURES}/swagger-petstore/openapi.yaml`, []],
  ['petstore-expanded', `${FIXTURES}/petstore-expanded/openapi.yaml`, []],
  ['cycle', `${FIXTURES}/hand/cycle.yaml`, []],
  ['clash', `${FIXTURES}/hand/clash.yaml`, []],
  ['no-operation-id', `${FIXTURES}/hand/no-operation-id.yaml`, []],
  ['v3-2', `${FIXTURES}/hand/v3-2.yaml`, []],
  ['relative-server', `${FIXTURES}/hand/relative-server.yaml`, ['--server-url', 'https://relative.example.com/api/v3']],
  ['split', `${FIXTURES}/hand/split/openapi.yaml`, []],
  ['headers', `${FIXTURES}/hand/headers.yaml`, []],
];

describe('mt import openapi: golden output', { timeout: 120_000 }, () => {
  it.each(GOLDEN_CASES)(
    '%s: the files are the golden ones, and mt check takes them as they are',
    async (name, source, extra) => {
      const out = await fresh(`golden-${name}`);
      const result = await mt(['import', 'openapi', source, '--out', out, ...extra]);
      expect(result.code, result.stderr).toBe(0);
      const stderr = result.stderr.split(out).join('<out>');
      const produced = await treeOf(out);
      const golden = join(GOLDEN, name);
      if (UPDATE) {
        await rm(golden, { recursive: true, force: true });
        for (const [path, text] of produced) {
          await mkdir(dirname(join(golden, path)), { recursive: true });
          await writeFile(join(golden, path), text);
        }
        await writeFile(join(golden, 'stderr.txt'), stderr);
      }
      const expected = await treeOf(golden);
      expected.delete('stderr.txt');
      expect(produced).toEqual(expected);
      expect(stderr).toBe(await readFile(join(golden, 'stderr.txt'), 'utf8'));
      const check = await mt(['check', out]);
      expect(check.code, check.stderr).toBe(0);
      expect(check.stderr).toMatch(/^ok: \d+ resources checked, 0 errors, 0 warnings/m);
    },
  );

  it('says what each hand-written fixture is there for', async () => {
    const warnings = async (name: string) => readFile(join(GOLDEN, name, 'stderr.txt'), 'utf8');
    expect(await warnings('clash')).toContain(
      'GET /b (get_thing) is named clash-api-get-thing-2: clash-api-get-thing is taken by GET /a (getThing)',
    );
    expect(await warnings('v3-2')).toContain('is OpenAPI 3.2.0: read as 3.1');
    const cycle = await readFile(join(GOLDEN, 'cycle/connectors/open-api/tree-api-create-node.mtr'), 'utf8');
    // A schema that refers to itself is written once under $defs, the cycle kept as a reference (no warning).
    expect(await warnings('cycle')).not.toContain('warning');
    expect(cycle.match(/"\$ref" = "#\/\$defs\/Node"/g)?.length).toBe(4);
    // readOnly id: dropped from the request body, kept in the response.
    expect(cycle.slice(0, cycle.indexOf('schema.response'))).not.toContain('id = ');
    expect(cycle.slice(cycle.indexOf('schema.response'))).toContain('id = ');
    const museumTool = await readFile(
      join(GOLDEN, 'museum/external-operations/open-api/redocly-museum-api-create-special-event.mtr'),
      'utf8',
    );
    expect(museumTool).toContain('requiresApproval = true');
    expect(museumTool).toContain('secret = @ref("redocly-museum-api-museum-placeholder-auth")');
    const getHours = await readFile(
      join(GOLDEN, 'museum/external-operations/open-api/redocly-museum-api-get-museum-hours.mtr'),
      'utf8',
    );
    expect(getHours).not.toContain('requiresApproval');
    // Header parameters are inputs (parameters.header); the credential's header and Authorization never are.
    const headers = await readFile(join(GOLDEN, 'headers/connectors/open-api/headers-api-list-reports.mtr'), 'utf8');
    const headerInputs = headers.slice(headers.indexOf('parameters.header'), headers.indexOf('schema.response'));
    expect([...headerInputs.matchAll(/name = "([^"]+)"/g)].map((m) => m[1])).toEqual([
      'X-Request-Id',
      'X-Page',
      'Accept-Language',
    ]);
    expect(headerInputs).toMatch(/name = "X-Request-Id"\n[^}]*required = true/);
    expect(
      await readFile(join(GOLDEN, 'headers/external-operations/open-api/headers-api-list-reports.mtr'), 'utf8'),
    ).toContain('header = "X-Api-Key"');
    expect(await warnings('headers')).toContain(
      'header parameter X-Api-Key left out: it is the credential of the security scheme apiKey, never a tool input',
    );
    const clash = await treeOf(join(GOLDEN, 'clash'));
    expect([...clash.keys()].filter((p) => p.startsWith('connectors/'))).toEqual([
      'connectors/open-api/clash-api-get-thing-2.mtr',
      'connectors/open-api/clash-api-get-thing.mtr',
      'connectors/open-api/clash-api-other-thing.mtr',
    ]);
  });
});

describe('mt import openapi: output deployed', { timeout: 120_000 }, () => {
  const ADMIN_KEY = `mt_import_${Date.now().toString(36)}_0123456789abcdef`;
  let db: TestDatabase;
  let server: ServeProcess;

  beforeAll(async () => {
    db = await createTestDatabase('mt_import_openapi');
    server = await startServer(db.url, ADMIN_KEY, home, { MT_EGRESS_ALLOW: '127.0.0.1/32' });
  });

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  it('three documents imported into one repo deploy into a real server on PostgreSQL', async () => {
    const out = await fresh('deploy');
    for (const [name, source] of GOLDEN_CASES.slice(0, 3)) {
      // The real executable once; the others in this process.
      const result = await (name === 'museum' ? mtProcess : mt)(['import', 'openapi', source, '--out', out]);
      expect(result.code, result.stderr).toBe(0);
    }
    const client = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
    const secrets = new Set<string>();
    for (const [path, text] of await treeOf(out)) {
      if (!path.startsWith('external-operations/')) continue;
      for (const match of text.matchAll(/secret = @ref\("([^"]+)"\)/g)) secrets.add(match[1] as string);
    }
    expect([...secrets].sort()).toEqual([
      'redocly-museum-api-museum-placeholder-auth',
      'swagger-petstore-openapi-3-0-api-key',
    ]);
    for (const name of secrets) await client.secrets.create({ name, value: 'not-a-real-key' });
    const deploy = await mtProcess(['deploy', out, '--json'], { MT_API_URL: server.url, MT_API_KEY: ADMIN_KEY });
    expect(deploy.code, deploy.stderr + deploy.stdout).toBe(0);
    const connectors = await client.connectors.list();
    const names = connectors.map((c) => c.name);
    expect(names).toContain('redocly-museum-api-create-special-event');
    expect(names).toContain('swagger-petstore-openapi-3-0-place-order');
    expect(names).toContain('swagger-petstore-add-pet');
    expect(names.length).toBe(8 + 17 + 3);
  });

  it('a doubling document written with $defs still checks each request against the referred schema at call time', async () => {
    const received: unknown[] = [];
    const upstream = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"made":true}');
      });
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    try {
      const { port } = upstream.address() as AddressInfo;
      const source = join(scratch, 'doubling-deploy.json');
      await writeFile(source, doubling(30, `http://127.0.0.1:${port}`));
      const out = await fresh('doubling-deploy');
      const imported = await mt(['import', 'openapi', source, '--out', out, '--no-approval']);
      expect(imported.code, imported.stderr).toBe(0);
      const deploy = await mtProcess(['deploy', out, '--json'], {
        MT_API_URL: server.url,
        MT_API_KEY: ADMIN_KEY,
        MT_EGRESS_ALLOW: '127.0.0.1/32',
      });
      expect(deploy.code, deploy.stderr + deploy.stdout).toBe(0);
      const client = new Maitento({ baseUrl: server.url, apiKey: ADMIN_KEY, maxRetries: 0 });
      // A leaf 30 levels down reached through L1 ... L30: valid, and sent.
      let leaf: Record<string, unknown> = { n: 7 };
      for (let i = 0; i < 30; i++) leaf = { [i % 2 === 0 ? 'a' : 'b']: leaf };
      const ok = await client.extops.call('doubling-make-thing', { arguments: { request: leaf } });
      expect(ok, JSON.stringify(ok)).toMatchObject({ ok: true, status: 200 });
      expect(received).toEqual([leaf]);
      // The same with the leaf's integer a string, and with a property L5 does not have: refused, never sent.
      const deepWrong = JSON.parse(JSON.stringify(leaf).replace('"n":7', '"n":"seven"'));
      const extra = { a: { b: { a: { b: { a: { zzz: 1 } } } } } };
      for (const request of [deepWrong, extra]) {
        const refused = await client.extops.call('doubling-make-thing', { arguments: { request } });
        expect(refused, JSON.stringify(refused)).toMatchObject({ ok: false, code: 'api:gateway:request-invalid' });
      }
      expect(received).toHaveLength(1);
    } finally {
      upstream.close();
    }
  });
});

describe('mt import openapi: errors and filters', { timeout: 60_000 }, () => {
  it('refuses Swagger 2.0, an invalid document (at its JSON pointer) and a YAML alias bomb with exit 2; a missing file is exit 1', async () => {
    const out = await fresh('errors');
    const swagger = await mt(['import', 'openapi', `${FIXTURES}/hand/swagger-2.yaml`, '--out', out]);
    expect(swagger.code).toBe(2);
    expect(swagger.stderr).toContain('error [api:import:swagger-2]');
    expect(swagger.stderr).toContain('convert it to OpenAPI 3.x first');
    const invalid = await mt(['import', 'openapi', `${FIXTURES}/hand/invalid.yaml`, '--out', out]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('error [api:import:document-invalid]');
    expect(invalid.stderr).toContain("/paths/~1ping/get/responses/200: must have required property 'description'");
    const bomb = await mt(['import', 'openapi', `${FIXTURES}/hand/alias-bomb.yaml`, '--out', out]);
    expect(bomb.code).toBe(2);
    expect(bomb.stderr).toContain('Excessive alias count');
    const missing = await mt(['import', 'openapi', `${FIXTURES}/hand/nope.yaml`, '--out', out]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error [api:import:source-unreadable]');
    // Nothing was written by any of them.
    await expect(readdir(out)).rejects.toThrow();
  });

  it('refuses a $ref of a file to a host (another host than its file system): exit 2, the pointer named', async () => {
    const source = join(scratch, 'host-ref.yaml');
    await writeFile(
      source,
      [
        'openapi: 3.1.0',
        'info: { title: Host ref, version: 1.0.0 }',
        'paths:',
        '  /events:',
        '    post:',
        '      requestBody:',
        '        content:',
        '          application/json:',
        "            schema: { $ref: 'https://schemas.example.com/event.yaml#/Event' }",
        "      responses: { '201': { description: Created } }",
      ].join('\n'),
    );
    const out = await fresh('host-ref');
    const result = await mt(['import', 'openapi', source, '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `error [api:import:ref-external]: ${source} has a $ref to another host (https://schemas.example.com/event.yaml#/Event) at /paths/~1events/post/requestBody/content/application~1json/schema/$ref`,
    );
    await expect(readdir(out)).rejects.toThrow();
  });

  // Issue #41 item 6: a $ref naming the CLI's login file put its API key into a connector, and `mt check` said ok.
  it("refuses a $ref outside the document's folder (../, an absolute path, a symlink out): exit 2, nothing written", async () => {
    const dir = join(scratch, 'outside');
    await mkdir(join(dir, 'api'), { recursive: true });
    const secret = 'mt_0123456789secretkeyOFTHELOGINFILE';
    const login = join(dir, 'login.json');
    await writeFile(login, JSON.stringify({ url: 'http://127.0.0.1:8080', key: secret }));
    await symlink(login, join(dir, 'api', 'linked.json'));
    const spec = (ref: string) =>
      [
        'openapi: 3.1.0',
        'info: { title: Outside, version: 1.0.0 }',
        'servers: [{ url: https://outside.example.com }]',
        'paths:',
        '  /events:',
        '    post:',
        '      requestBody:',
        '        content:',
        '          application/json:',
        `            schema: { $ref: '${ref}' }`,
        "      responses: { '201': { description: Created } }",
      ].join('\n');
    for (const [name, ref] of [
      ['dotdot', '../login.json'],
      ['absolute', login],
      ['symlink', 'linked.json'],
    ] as const) {
      const source = join(dir, 'api', `${name}.yaml`);
      await writeFile(source, spec(ref));
      const out = await fresh(`outside-${name}`);
      const result = await mt(['import', 'openapi', source, '--out', out]);
      expect([name, result.code]).toEqual([name, 2]);
      expect(result.stderr).toContain(
        `error [api:import:ref-outside]: ${source} has a $ref outside what it may read (${ref}) at /paths/~1events/post/requestBody/content/application~1json/schema/$ref: it is not inside the document's folder`,
      );
      expect(result.stderr + result.stdout).not.toContain(secret);
      await expect(readdir(out)).rejects.toThrow();
    }
    // A file inside the folder, by a relative path or a symlink that stays inside, is still read.
    await writeFile(
      join(dir, 'api', 'event.json'),
      JSON.stringify({ type: 'object', properties: { id: { type: 'string' } } }),
    );
    await symlink(join(dir, 'api', 'event.json'), join(dir, 'api', 'inside.json'));
    for (const ref of ['./event.json', 'inside.json']) {
      const source = join(dir, 'api', 'inside.yaml');
      await writeFile(source, spec(ref));
      const out = await fresh('outside-inside');
      const result = await mt(['import', 'openapi', source, '--out', out]);
      expect(result.code, result.stderr).toBe(0);
    }
  });

  it('writes each schema once under $defs: a 30-level doubling document imports in well under a second, small', async () => {
    const source = join(scratch, 'doubling.json');
    await writeFile(source, doubling(30));
    expect((await readFile(source)).length).toBeLessThan(8192);
    const out = await fresh('doubling');
    const started = performance.now();
    const result = await mt(['import', 'openapi', source, '--out', out]);
    const took = performance.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(took).toBeLessThan(1_000);
    const connector = await readFile(join(out, 'connectors/open-api/doubling-make-thing.mtr'), 'utf8');
    expect(connector.length).toBeLessThan(20_000);
    // L0 is referred to once (inlined at the root); L1 ... L30 twice each: 30 definitions, each written once.
    expect(connector.match(/^ {4}L\d+ = \{$/gm)?.length).toBe(30);
    const check = await mt(['check', out]);
    expect(check.code, check.stderr).toBe(0);
  });

  it('refuses a schema nested deeper than the cap: exit 2, api:import:schema-too-large, nothing written', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 60; i++) deep = { type: 'object', properties: { x: deep } };
    const source = join(scratch, 'deep.json');
    await writeFile(
      source,
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 'Deep', version: '1' },
        servers: [{ url: 'https://deep.example.com' }],
        paths: {
          '/deep': {
            post: {
              requestBody: { content: { 'application/json': { schema: deep } } },
              responses: { '204': { description: 'ok' } },
            },
          },
        },
      }),
    );
    const out = await fresh('deep');
    const result = await mt(['import', 'openapi', source, '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `error [api:import:schema-too-large]: the POST /deep request body schema of ${source} is too large to import: it nests deeper than 48 levels`,
    );
    await expect(readdir(out)).rejects.toThrow();
  });

  it('makes names of a hostile operationId in linear time (1 MB of capitals)', () => {
    const id = `${'A'.repeat(1024 * 1024)}1`;
    const started = performance.now();
    const name = kebab(id);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(name).toBe(id.toLowerCase());
    expect(kebab('getHTTPResponseCode')).toBe('get-http-response-code');
  });

  it('refuses a relative server without --server-url, exit 2', async () => {
    const out = await fresh('relative');
    const result = await mt(['import', 'openapi', `${FIXTURES}/hand/relative-server.yaml`, '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'error [api:import:server-relative]: the server URL /api/v3 of test/fixtures/openapi/hand/relative-server.yaml is relative',
    );
    expect(result.stderr).toContain('--server-url');
  });

  it('filters by tag and operationId; an unknown one is exit 2 listing the valid ones', async () => {
    const source = `${FIXTURES}/swagger-petstore/openapi.yaml`;
    const out = await fresh('filters');
    const tags = await mt(['import', 'openapi', source, '--out', out, '--tags', 'store', '--json']);
    expect(tags.code, tags.stderr).toBe(0);
    expect(JSON.parse(tags.stdout).operations.map((o: { operationId: string }) => o.operationId)).toEqual([
      'getInventory',
      'placeOrder',
      'getOrderById',
      'deleteOrder',
    ]);
    const out2 = await fresh('filters2');
    const excluded = await mt([
      'import',
      'openapi',
      source,
      '--out',
      out2,
      '--exclude-tags',
      'pet,user',
      '--exclude-operations',
      'deleteOrder',
      '--json',
    ]);
    expect(JSON.parse(excluded.stdout).operations.map((o: { operationId: string }) => o.operationId)).toEqual([
      'getInventory',
      'placeOrder',
      'getOrderById',
    ]);
    const out3 = await fresh('filters3');
    const ops = await mt(['import', 'openapi', source, '--out', out3, '--operations', 'getPetById', '--name', 'pets']);
    expect(ops.code, ops.stderr).toBe(0);
    expect([...(await treeOf(out3)).keys()].sort()).toEqual([
      '.mt-import/pets.json',
      'connectors/open-api/pets-get-pet-by-id.mtr',
      'external-operations/open-api/pets-get-pet-by-id.mtr',
    ]);
    const unknownTag = await mt(['import', 'openapi', source, '--out', out3, '--tags', 'pets,store']);
    expect(unknownTag.code).toBe(2);
    expect(unknownTag.stderr).toContain(
      'error [api:import:filter-unknown]: unknown tag pets; the document has: pet, store, user',
    );
    const unknownOp = await mt(['import', 'openapi', source, '--out', out3, '--exclude-operations', 'getPet']);
    expect(unknownOp.code).toBe(2);
    expect(unknownOp.stderr).toContain('unknown operationId getPet; the document has: addPet, createUser');
  });

  it('warns above 50 tools, and names an operation without operationId by method and path', async () => {
    const paths: Record<string, unknown> = {};
    for (let i = 0; i < 51; i++) paths[`/things/n${i}`] = { get: { responses: { 200: { description: 'ok' } } } };
    const source = join(scratch, 'many.json');
    await writeFile(
      source,
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 'Many', version: '1' },
        servers: [{ url: 'https://m.example.com' }],
        paths,
      }),
    );
    const result = await mt(['import', 'openapi', source, '--out', await fresh('many'), '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.operations).toHaveLength(51);
    expect(report.operations[0]).toEqual({ name: 'many-get-things-n0', method: 'GET', path: '/things/n0' });
    expect(report.warnings).toEqual([
      '51 tools: models choose worse among more than 50; consider --tags or --operations',
    ]);
  });

  it('skips an operation whose pattern the linear-time engine does not run, saying which; the others are written', async () => {
    const body = (pattern: string) => ({
      required: true,
      content: {
        'application/json': {
          schema: { type: 'object', properties: { password: { type: 'string', pattern } } },
        },
      },
    });
    const ok = { 200: { description: 'ok' } };
    const source = join(scratch, 'patterns.json');
    await writeFile(
      source,
      JSON.stringify({
        openapi: '3.1.0',
        info: { title: 'Patterns', version: '1' },
        servers: [{ url: 'https://p.example.com' }],
        paths: {
          '/lookahead': { post: { operationId: 'lookahead', requestBody: body('^(?=.*[0-9]).{8,}$'), responses: ok } },
          '/plain': { post: { operationId: 'plain', requestBody: body('^[a-z0-9]{8,}$'), responses: ok } },
        },
      }),
    );
    const result = await mt(['import', 'openapi', source, '--out', await fresh('patterns'), '--json']);
    expect(result.code, result.stdout).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.operations.map((o: { path: string }) => o.path)).toEqual(['/plain']);
    expect(report.warnings).toEqual([
      expect.stringMatching(/lookahead.*uses a lookahead or lookbehind, which Maitento's linear-time pattern engine/),
    ]);
  });

  it('--no-approval leaves writes unsupervised', async () => {
    const out = await fresh('no-approval');
    const result = await mt([
      'import',
      'openapi',
      `${FIXTURES}/museum/openapi.yaml`,
      '--out',
      out,
      '--no-approval',
      '--operations',
      'createSpecialEvent',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const tool = await readFile(
      join(out, 'external-operations/open-api/redocly-museum-api-create-special-event.mtr'),
      'utf8',
    );
    expect(tool).not.toContain('requiresApproval');
  });
});

describe('mt import openapi: re-import', { timeout: 60_000 }, () => {
  const museum = join(ROOT, FIXTURES, 'museum/openapi.yaml');
  const connector = 'connectors/open-api/museum-get-special-event.mtr';
  const tool = 'external-operations/open-api/museum-get-special-event.mtr';
  let doc: string;
  let out: string;

  /** Imports `text` as the Museum document, under the name museum. */
  async function importText(text: string, ...flags: string[]) {
    const source = join(out, 'museum.yaml');
    await writeFile(source, text);
    return mt(['import', 'openapi', source, '--out', join(out, 'repo'), '--name', 'museum', ...flags]);
  }

  beforeAll(async () => {
    doc = await readFile(museum, 'utf8');
    out = await fresh('reimport');
    await mkdir(out, { recursive: true });
    const first = await importText(doc);
    expect(first.code, first.stderr).toBe(0);
  });

  it('the same input twice: "no changes", nothing written, --check exits 0', async () => {
    const before = await treeOf(join(out, 'repo'));
    const again = await importText(doc);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('no changes');
    expect(await treeOf(join(out, 'repo'))).toEqual(before);
    expect((await importText(doc, '--check')).code).toBe(0);
  });

  it('keeps a hand edit while a new parameter arrives; --dry-run and --check see the drift first', async () => {
    const path = join(out, 'repo', connector);
    const edited = (await readFile(path, 'utf8')).replace(
      /description = "[^"]*"/,
      'description = "One special event, edited by hand"',
    );
    await writeFile(path, edited);
    const withParam = doc.replace(
      '      operationId: getSpecialEvent\n      tags:\n        - Events\n      parameters:\n',
      '      operationId: getSpecialEvent\n      tags:\n        - Events\n      parameters:\n        - name: lang\n          in: query\n          schema:\n            type: string\n',
    );
    expect(withParam).not.toBe(doc);
    const check = await importText(withParam, '--check');
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(`merged (hand edits kept) ${connector}`);
    const dry = await importText(withParam, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`+++ b/${connector}`);
    expect(dry.stdout).toContain('+    name = "lang"');
    expect(await readFile(path, 'utf8')).toBe(edited);
    const merged = await importText(withParam);
    expect(merged.code, merged.stderr).toBe(0);
    const text = await readFile(path, 'utf8');
    expect(text).toContain('description = "One special event, edited by hand"');
    expect(text).toContain('name = "lang"');
    expect((await mt(['check', join(out, 'repo')])).code).toBe(0);
    doc = withParam;
  });

  it('both changed: the file is left as it is, the diff shown, exit 3; --force takes the document', async () => {
    const path = join(out, 'repo', connector);
    const mine = await readFile(path, 'utf8');
    const changed = doc.replace('summary: Get special event', 'summary: Get one special event');
    expect(changed).not.toBe(doc);
    const conflict = await importText(changed);
    expect(conflict.code).toBe(3);
    expect(conflict.stderr).toContain(`CONFLICT ${connector} (both changed: description)`);
    expect(conflict.stderr).toContain('error [api:import:conflict]');
    expect(conflict.stdout).toContain('+description = "Get one special event"');
    expect(await readFile(path, 'utf8')).toBe(mine);
    // The tool's guidance changed upstream too, but nothing at all was written.
    expect(await readFile(join(out, 'repo', tool), 'utf8')).not.toContain('Get one special event');
    const forced = await importText(changed, '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(await readFile(path, 'utf8')).toContain('description = "Get one special event"');
    expect(await readFile(join(out, 'repo', tool), 'utf8')).toContain('Get one special event');
    doc = changed;
  });

  it('a dropped operation deletes its unedited files and lists an edited one', async () => {
    const repo = join(out, 'repo');
    const hours = 'external-operations/open-api/museum-get-museum-hours.mtr';
    await writeFile(join(repo, hours), `${await readFile(join(repo, hours), 'utf8')}// my note\n`);
    const start = doc.indexOf('  /museum-hours:');
    const end = doc.indexOf('  /special-events:');
    const dropped = doc.slice(0, start) + doc.slice(end);
    const result = await importText(dropped);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('deleted (operation dropped) connectors/open-api/museum-get-museum-hours.mtr');
    expect(result.stderr).toContain(`kept ${hours}: its operation is gone from the document`);
    const files = await treeOf(repo);
    expect(files.has('connectors/open-api/museum-get-museum-hours.mtr')).toBe(false);
    expect(files.has(hours)).toBe(true);
  });
});
