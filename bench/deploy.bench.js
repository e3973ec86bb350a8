// Deploy benchmark: 1,000 resources (400 connectors, 400 tools, 100 agents, 100 interactions), a first
// deploy and a no-op redeploy, on PostgreSQL (a fresh database on 127.0.0.1:5432, dropped after) and on
// PGlite (a temp folder). Uses the built packages: run `npx tsc -b` first. Writes its section of docs/performance.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { compileRepo } from '@maitento/lang';
import { createNamespace, createPgDb, createPgliteDb, deploy, migrate } from '@maitento/store';
import { createTestDatabase } from '@maitento/testkit';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

const COUNTS = { connectors: 400, tools: 400, agents: 100, interactions: 100 };
const ROUNDS = 5;

function repoFiles() {
  const files = [];
  for (let i = 0; i < COUNTS.connectors; i++) {
    files.push({
      path: `connectors/open-api/api-${i}.mtr`,
      content: `method = "POST"
url = "https://api${i % 20}.example.com/v1/items/{itemId}"
description = "Endpoint ${i}"
parameters.path = [ { name = "itemId" description = "The item" type = "string" } ]
parameters.query = [ { name = "limit" description = "How many" type = "integer" } ]
schema.request = { type = "object" properties = { note = { type = "string" } amount = { type = "number" } } required = [ "note" ] }
`,
    });
    files.push({
      path: `external-operations/open-api/tool-${i}.mtr`,
      content: `connector = @ref("api-${i}")
guidance = "Does thing ${i} for the user."
bindings.query:limit = 5
`,
    });
  }
  for (let i = 0; i < COUNTS.agents; i++) {
    const tools = [0, 1, 2, 3].map((k) => `{ ref = @ref("tool-${(i * 4 + k) % COUNTS.tools}") }`).join(', ');
    files.push({
      path: `agents/agent-${i}.mtr`,
      content: `model = "openai:gpt-4o-mini"\ninstructions = "You are agent ${i}."\nfunctions = [ ${tools} ]\n`,
    });
    files.push({
      path: `interactions/one-shot/flow-${i}.mtr`,
      content: `agent = { name = "Agent${i}" agent = @ref("agent-${i}") }
task = "Handle: %%request%%"
inputs.prompts = [ { name = "request" description = "What to do" required = true } ]
`,
    });
  }
  return files;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function time(fn) {
  const start = performance.now();
  const result = await fn();
  return { ms: performance.now() - start, result };
}

async function measure(label, db, compiled) {
  await migrate(db);
  const first = [];
  const noop = [];
  const baseline = [];
  for (let round = 0; round < ROUNDS; round++) {
    const ns = `bench-${round}`;
    await createNamespace(db, ns);
    const created = await time(() => deploy(db, ns, compiled));
    if (created.result.changes.some((c) => c.action !== 'create')) throw new Error('first deploy did not create all');
    first.push(created.ms);
    const again = await time(() => deploy(db, ns, compiled));
    if (again.result.changes.some((c) => c.action !== 'unchanged')) throw new Error('redeploy was not a no-op');
    noop.push(again.ms);
    // Baseline: the one query a no-op deploy cannot avoid, reading the latest hash of every resource.
    const read = await time(() =>
      db.query(
        'SELECT DISTINCT ON (kind, name) kind, name, version, hash FROM mt_resource_versions ' +
          'WHERE namespace = $1 ORDER BY kind, name, version DESC',
        [ns],
      ),
    );
    baseline.push(read.ms);
  }
  return { label, first: median(first), noop: median(noop), baseline: median(baseline) };
}

const files = repoFiles();
const compileTime = await time(() => compileRepo(files, {}));
const compiled = compileTime.result;
if (!compiled.ok) {
  console.error(compiled.diagnostics.slice(0, 5));
  throw new Error('the generated repo does not compile');
}
const total =
  compiled.connectors.length + compiled.tools.length + compiled.agents.length + compiled.interactions.length;

const results = [];
const database = await createTestDatabase('mt_bench_deploy');
const pgDb = createPgDb(database.url);
try {
  results.push(await measure('PostgreSQL 127.0.0.1 (pg Pool)', pgDb, compiled));
} finally {
  await pgDb.close();
  await database.drop();
}
const dir = mkdtempSync(join(tmpdir(), 'mt-bench-pglite-'));
const liteDb = await createPgliteDb(dir);
try {
  results.push(await measure('PGlite (temp folder)', liteDb, compiled));
} finally {
  await liteDb.close();
  rmSync(dir, { recursive: true, force: true });
}

const fmt = (ms) => `${ms.toFixed(1)} ms`;

// A Markdown table with padded columns, as the formatter (biome) writes it.
function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}
const lines = [
  '## Deploy (`npm run bench:deploy`)',
  '',
  provenance('npm run bench:deploy'),
  '',
  `Deploy of ${total} resources (${COUNTS.connectors} connectors, ${COUNTS.tools} tools, ${COUNTS.agents} agents, ` +
    `${COUNTS.interactions} interactions), median of ${ROUNDS} rounds, each into a fresh namespace. ` +
    `Compiling the repo once took ${fmt(compileTime.ms)} and is not included below.`,
  '',
  ...table(
    ['Database', 'First deploy', 'No-op redeploy', 'Baseline: read every latest hash'],
    results.map((r) => [r.label, fmt(r.first), fmt(r.noop), fmt(r.baseline)]),
  ),
  '',
  'A no-op redeploy hashes every compiled resource (canonical JSON, sha256), compares the hashes with the latest ' +
    'versions in one query, and writes nothing; a first deploy also inserts the versions, one statement per kind. ' +
    'Aim: a no-op redeploy of 1,000 resources under 1 s.',
];
console.log(lines.join('\n'));

writeBenchSection('deploy', lines.join('\n'));
