// `npm run bench:import`: `mt import openapi` of a generated 1,000-operation OpenAPI document, against the
// 8-operation Redocly Museum in the same run (the fixed cost of a process that imports). Each import is the real
// `mt` in its own process; the time is from spawn to exit, the memory the process's peak RSS. Needs the built CLI
// (`npx tsc -b`); writes its figures into docs/performance.md between its markers (bench/lib/perf-doc.js).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OPERATIONS = 1000;
const ROUNDS = 2;

/** A document of `OPERATIONS` operations: half GET with a path and two query parameters, half POST with a body. */
function document() {
  const paths = {};
  for (let i = 0; i < OPERATIONS / 2; i++) {
    paths[`/shops/{shopId}/things-${i}`] = {
      parameters: [{ name: 'shopId', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        operationId: `listThings${i}`,
        summary: `Lists the things of kind ${i}`,
        tags: [`group-${i % 10}`],
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer' } },
          { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'Where the last page ended' },
          { name: 'X-Request-Id', in: 'header', schema: { type: 'string' }, description: 'Correlates the call' },
        ],
        responses: {
          200: {
            description: 'ok',
            content: {
              'application/json': {
                schema: { type: 'array', items: { $ref: '#/components/schemas/Thing' } },
              },
            },
          },
        },
      },
      post: {
        operationId: `createThing${i}`,
        summary: `Creates a thing of kind ${i}`,
        tags: [`group-${i % 10}`],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/NewThing' } } },
        },
        responses: {
          201: {
            description: 'created',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
        },
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'Bench API', version: '1' },
    servers: [{ url: 'https://api.example.com/v1' }],
    security: [{ key: [] }],
    paths,
    components: {
      securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
      schemas: {
        NewThing: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', description: 'The name' },
            size: { type: 'integer', minimum: 0 },
            tags: { type: 'array', items: { type: 'string' } },
            owner: { $ref: '#/components/schemas/Owner' },
          },
        },
        Thing: {
          allOf: [
            { $ref: '#/components/schemas/NewThing' },
            {
              type: 'object',
              properties: { id: { type: 'string', readOnly: true }, created: { type: 'string', format: 'date-time' } },
            },
          ],
        },
        Owner: { type: 'object', properties: { id: { type: 'string' }, email: { type: 'string', format: 'email' } } },
      },
    },
  };
}

/** Runs `mt import openapi` in its own process; its time from spawn to exit and its peak RSS. */
function importOnce(source, out) {
  // A tiny entry point that runs `mt` as bin/mt.js does (dist/main.js: `mt import` loads only its own command) and
  // then prints the process's peak RSS and CPU time on fd 3.
  const entry = `
    const { main } = await import(${JSON.stringify(join(ROOT, 'packages/cli/dist/main.js'))});
    await main(['node', 'mt', 'import', 'openapi', ${JSON.stringify(source)}, '--out', ${JSON.stringify(out)}, '--json']);
    const code = process.exitCode ?? 0;
    process.exitCode = 0;
    require('node:fs').writeSync(3, JSON.stringify({ code, usage: process.resourceUsage() }));
  `;
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, ['--input-type=commonjs', '-e', `(async () => {${entry}})()`], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let report = '';
    let stderr = '';
    child.stdio[3].on('data', (c) => {
      report += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', () => {
      const ms = performance.now() - start;
      try {
        const { code, usage } = JSON.parse(report);
        if (code !== 0) reject(new Error(`mt exited ${code}: ${stderr}`));
        // CPU time (user + system) says what the import costs whatever else runs on the machine; wall time does not.
        else resolve({ ms, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, rssMb: usage.maxRSS / 1024 });
      } catch {
        reject(new Error(`no report from the import: ${stderr}`));
      }
    });
  });
}

async function series(name, source, reimport) {
  const results = [];
  for (let round = 0; round < ROUNDS; round++) {
    const out = mkdtempSync(join(tmpdir(), `mt-bench-import-${name}-`));
    try {
      const first = await importOnce(source, out);
      results.push(reimport ? await importOnce(source, out) : first);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
  const best = Math.min(...results.map((r) => r.ms));
  const cpu = Math.min(...results.map((r) => r.cpuMs));
  const rss = Math.max(...results.map((r) => r.rssMb));
  return { name, best, cpu, rss };
}

const scratch = mkdtempSync(join(tmpdir(), 'mt-bench-import-doc-'));
const big = join(scratch, 'bench.json');
writeFileSync(big, JSON.stringify(document()));
const museum = join(ROOT, 'test/fixtures/openapi/museum/openapi.yaml');
const rows = [];
try {
  rows.push(await series('museum', museum, false));
  rows.push(await series('1000', big, false));
  rows.push(await series('1000-again', big, true));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const [small, first, again] = rows;
const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;
const meets = first.best < 5000 && first.rss < 300;
const section = `## Importing OpenAPI (\`npm run bench:import\`)

${provenance('npx tsc -b && npm run bench:import')}

\`mt import openapi\` of a generated OpenAPI 3.0 document
of ${OPERATIONS.toLocaleString('en-US')} operations (500 paths, each a GET with a path, two query and a header parameter and a
POST with a \`$ref\` body; shared \`allOf\` and \`$ref\` schemas, a header API key), each import in its own process, timed
from spawn to exit (Node.js start-up included), with the process's peak RSS; the best of ${ROUNDS} rounds, into an
empty folder each. Baseline in the same run: the 8-operation Redocly Museum (the fixed cost of a process that imports).

| What | Wall time | CPU time (user + system) | Peak RSS |
| --- | --- | --- | --- |
| Museum, 8 operations (baseline) | ${fmt(small.best)} | ${fmt(small.cpu)} | ${small.rss.toFixed(0)} MB |
| ${OPERATIONS.toLocaleString('en-US')} operations, first import (2,000 files written) | ${fmt(first.best)} | ${fmt(first.cpu)} | ${first.rss.toFixed(0)} MB |
| the same again (a re-import: three-way merge, "no changes") | ${fmt(again.best)} | ${fmt(again.cpu)} | ${again.rss.toFixed(0)} MB |

The aim (under 5 s and 300 MB for 1,000 operations) is ${meets ? 'met' : '**not met** in wall time as measured'}${!meets && first.cpu < 5000 ? ` (its CPU time, ${fmt(first.cpu)}, is under 5 s: the wall time is the shared machine's)` : ''}; the memory aim is ${first.rss < 300 ? 'met' : '**not met**'}. CPU time is the figure to compare between runs.`;
writeBenchSection('import', section);
console.log(section);
