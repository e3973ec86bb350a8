import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// A TypeScript client generated from the served document with openapi-typescript, as its users generate one,
// used through openapi-fetch: one function per operation sends the operation's example request (path, query and
// header parameters, the example body) and reads its answer as the generated type, and its example answer must be
// of that type. tsc (strict) type-checks it all, so the document works for a typed client, operation by operation.
const root = fileURLToPath(new URL('../../../', import.meta.url));
// Where this package's openapi-fetch is installed, for the generated client's tsconfig in a temporary folder.
const openapiFetch = dirname(createRequire(import.meta.url).resolve('openapi-fetch/package.json'));
let server: TestServer;
let dir: string;

type Media = { schema?: unknown; example?: unknown };
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: { type?: string } }[];
  requestBody?: { required?: boolean; content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}

beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'mt-openapi-ts-'));
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A sample value of a parameter, of its type. */
function sample(parameter: NonNullable<Operation['parameters']>[number]): string | number {
  if (parameter.schema?.type === 'integer' || parameter.schema?.type === 'number') return 1;
  if (parameter.name === 'Idempotency-Key') return 'retry-safe-1';
  if (parameter.name === 'Last-Event-ID') return '3';
  if (parameter.name === 'name') return 'refunds.md';
  return 'e0c1a2b3-0000-4000-8000-000000000001';
}

/** The TypeScript source that uses one operation through openapi-fetch. */
function useOf(path: string, method: string, op: Operation): string {
  const id = op.operationId;
  const params: Record<string, Record<string, string | number>> = {};
  for (const p of op.parameters ?? []) {
    // Every path parameter, and the query and header parameters a client would send here.
    if (p.in === 'path' || p.required || p.in === 'header') {
      params[p.in] = { ...params[p.in], [p.name]: sample(p) };
    }
  }
  const [type, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
  const init: string[] = [`params: ${JSON.stringify(params)}`];
  if (media) {
    init.push(`body: ${JSON.stringify(media.example)}`);
    if (type !== 'application/json') init.push('bodySerializer: (body: unknown) => String(body)');
    if (type !== 'application/json')
      init.push(`headers: { 'Content-Type': ${JSON.stringify(type === '*/*' ? 'text/plain' : type)} }`);
  }
  const ok = Object.keys(op.responses).find((s) => s.startsWith('2'))!;
  const okJson = op.responses[ok].content?.['application/json'];
  if (!okJson) init.push("parseAs: 'text'");
  const lines = [
    `export async function ${id}(): Promise<void> {`,
    `  const { data, error } = await client.${method.toUpperCase()}(${JSON.stringify(path)}, { ${init.join(', ')} });`,
    // Every error is an Error (its code typed), but the health check's 503, a body of its own.
    op.operationId === 'getHealth'
      ? '  if (error) console.log(error);'
      : '  if (error) console.log(error.code, error.error);',
  ];
  if (okJson) {
    const okType = `operations[${JSON.stringify(id)}]['responses'][${ok}]['content']['application/json']`;
    lines.push(`  const answer: ${okType} | undefined = data;`);
    lines.push(`  const example: ${okType} = ${JSON.stringify(okJson.example)};`);
    lines.push('  console.log(answer, example);');
  } else {
    lines.push('  console.log(data);');
  }
  lines.push('}');
  return lines.join('\n');
}

describe('a TypeScript client generated with openapi-typescript', () => {
  it('type-checks (tsc, strict) a use of every operation through openapi-fetch', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/openapi.json' });
    const doc = res.json() as { paths: Record<string, Record<string, Operation>> };
    const types = astToString(await openapiTS(doc as never));
    writeFileSync(join(dir, 'schema.d.ts'), types);
    const uses: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) uses.push(useOf(path, method, op));
    }
    expect(uses.length).toBeGreaterThan(60);
    writeFileSync(
      join(dir, 'use.ts'),
      [
        "import createClient from 'openapi-fetch';",
        "import type { operations, paths } from './schema.js';",
        '',
        "const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:8080', headers: { Authorization: 'Bearer mt_key' } });",
        '',
        ...uses,
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          module: 'esnext',
          moduleResolution: 'bundler',
          skipLibCheck: true,
          types: [],
          lib: ['es2022', 'dom'],
          paths: { 'openapi-fetch': [openapiFetch] },
        },
        files: ['use.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.status).toBe(0);
  });
});
