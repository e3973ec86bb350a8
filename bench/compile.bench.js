// `npm run bench:compile`: how fast the config compiler turns .mtr files into checked resources, against
// JSON.parse of the same data in the same run. Imports the built @maitento/lang (run `npx tsc -b` first) and
// writes its figures into docs/performance.md between its markers (bench/lib/perf-doc.js).
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { compileRepo, parseMtr } from '@maitento/lang';
import { provenance, writeBenchSection } from './lib/perf-doc.js';

const FILES = 1000;
const ROUNDS = 7;

/** One connector of about 40 lines, with its own body schema, and the same data as JSON. */
function connector(i) {
  const mtr = `// Generated connector ${i}.
method = "POST"
url = "https://api${i % 7}.example.com/v1/shops/{shopId}/orders/{orderId}/items"
description = "Adds an item to order of shop number ${i}, returning the order"
auth = "Header"
parameters.path = [
  { name = "shopId" description = "The shop" },
  { name = "orderId" description = "The order" type = "string" },
]
parameters.query = [
  { name = "dryRun" description = "Only check" type = "boolean" },
  { name = "limit" type = "integer" },
]
schema.request = {
  type = "object"
  properties = {
    sku${i} = { type = "string" description = "The item's SKU" }
    quantity = { type = "integer" minimum = 1 }
    note = { type = "string" maxLength = 200 }
    gift = {
      type = "object"
      properties = {
        wrap = { type = "boolean" }
        message = { type = "string" }
      }
    }
  }
  required = [ "sku${i}", "quantity" ]
}
schema.response = {
  type = "object"
  properties = {
    id = { type = "string" }
    total = { type = "number" }
    items = { type = "array" items = { type = "object" properties = { sku = { type = "string" } } } }
  }
}
`;
  const json = {
    method: 'POST',
    url: `https://api${i % 7}.example.com/v1/shops/{shopId}/orders/{orderId}/items`,
    description: `Adds an item to order of shop number ${i}, returning the order`,
    auth: 'Header',
    parameters: {
      path: [
        { name: 'shopId', description: 'The shop' },
        { name: 'orderId', description: 'The order', type: 'string' },
      ],
      query: [
        { name: 'dryRun', description: 'Only check', type: 'boolean' },
        { name: 'limit', type: 'integer' },
      ],
    },
    schema: {
      request: {
        type: 'object',
        properties: {
          [`sku${i}`]: { type: 'string', description: "The item's SKU" },
          quantity: { type: 'integer', minimum: 1 },
          note: { type: 'string', maxLength: 200 },
          gift: { type: 'object', properties: { wrap: { type: 'boolean' }, message: { type: 'string' } } },
        },
        required: [`sku${i}`, 'quantity'],
      },
      response: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          total: { type: 'number' },
          items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } },
        },
      },
    },
  };
  return { path: `connectors/open-api/add-item-${i}.mtr`, mtr, json };
}

/** One tool of about 40 lines on connector `i - 1`. */
function tool(i) {
  const c = i - 1;
  const comment = Array.from({ length: 24 }, (_, n) => `// Line ${n} of the notes on tool ${i}: what it is for.`).join(
    '\n',
  );
  const mtr = `${comment}
connector = @ref("add-item-${c}")
guidance = "Adds one item to an order. Ask for the quantity when the customer did not say it."
bindings.path:shopId = "shop-${i}"
bindings.query:dryRun = false
bindings.request:gift/wrap = true
auth = {
  header = "X-Api-Key"
  secret = @ref("shop-key-${i}")
}
requiresApproval = ${i % 4 === 0}
// The end.
`;
  const json = {
    connector: { $ref: `add-item-${c}` },
    guidance: 'Adds one item to an order. Ask for the quantity when the customer did not say it.',
    bindings: { path: { shopId: `shop-${i}` }, query: { dryRun: false }, request: { 'gift/wrap': true } },
    auth: { header: 'X-Api-Key', secret: { $ref: `shop-key-${i}` } },
    requiresApproval: i % 4 === 0,
  };
  return { path: `external-operations/open-api/add-item-tool-${i}.mtr`, mtr, json };
}

function generate(offset) {
  const out = [];
  for (let i = offset; i < offset + FILES; i++) out.push(i % 2 === 0 ? connector(i) : tool(i));
  return out;
}

function best(times) {
  return Math.min(...times);
}

function median(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const rate = (ms) => Math.round(FILES / (ms / 1000));
const show = (n) => n.toLocaleString('en-US');

// Each round compiles a fresh repo (new names, new schemas) so that no cache of an earlier round helps. Each
// measurement runs its own series of rounds, so that one never pays for the garbage another left behind.
// The warm-up runs a few rounds: one is not enough for V8 to have optimised the hot code.
for (let n = 0; n < 3; n++) {
  const warm = generate(1_000_000 + n * FILES * 2);
  compileRepo(warm.map((f) => ({ path: f.path, content: f.mtr })));
  for (const f of warm) parseMtr(f.mtr, f.path);
}

const rounds = Array.from({ length: ROUNDS }, (_, round) => {
  const files = generate(round * FILES * 2);
  return {
    repoFiles: files.map((f) => ({ path: f.path, content: f.mtr })),
    jsonTexts: files.map((f) => JSON.stringify(f.json, null, 2)),
    lines: files.reduce((n, f) => n + f.mtr.split('\n').length, 0),
  };
});
const lines = rounds[0].lines;

const compileTimes = [];
for (const { repoFiles } of rounds) {
  const t = performance.now();
  const repo = compileRepo(repoFiles);
  compileTimes.push(performance.now() - t);
  if (!repo.ok || repo.tools.length !== FILES / 2 || repo.definitions.size !== FILES / 2) {
    console.error(repo.diagnostics.slice(0, 5));
    throw new Error('the generated repo does not compile');
  }
}
const syntaxTimes = [];
for (const { repoFiles } of rounds) {
  const t = performance.now();
  for (const f of repoFiles) parseMtr(f.content, f.path);
  syntaxTimes.push(performance.now() - t);
}
const parseTimes = [];
for (const { jsonTexts } of rounds) {
  const t = performance.now();
  for (const text of jsonTexts) JSON.parse(text);
  parseTimes.push(performance.now() - t);
}
const [load1, load5] = loadavg();
const cpus = availableParallelism();

const AIM = 10_000;
const compileRate = rate(best(compileTimes));
const compileMedian = rate(median(compileTimes));
const parseRate = rate(best(parseTimes));
const syntaxRate = rate(best(syntaxTimes));
const ratio = (parseRate / compileRate).toFixed(1);
const verdict =
  compileRate >= AIM
    ? `The aim of ${show(AIM)} files/s with every check is met: the best round reached ${show(compileRate)} files/s${
        compileMedian >= AIM ? ', and so did the median round' : `, the median round ${show(compileMedian)}`
      }.`
    : `The aim of ${show(AIM)} files/s with every check is not met: the best round reached ${show(compileRate)} files/s, ${Math.round(
        (100 * (AIM - compileRate)) / AIM,
      )}% short.`;
const section = `## Config compiler (\`npm run bench:compile\`)

${provenance('npm run bench:compile')}

${FILES} generated files (half connectors with their own request and response schemas, half tools with bindings, auth
and a secret reference; ${Math.round(lines / FILES)} lines a file on average), compiled with \`compileRepo\` (every
check) in one process after a warm-up, ${ROUNDS} rounds, each a fresh repo; against \`JSON.parse\` of the same data.
The table gives the best round.

| What | Files/s |
| --- | --- |
| \`compileRepo\` | ${show(compileRate)} (median round ${show(compileMedian)}) |
| \`parseMtr\` alone (lex and parse, no checks) | ${show(syntaxRate)} |
| \`JSON.parse\` of equivalent JSON | ${show(parseRate)} |
| ratio (JSON.parse / compileRepo) | ${ratio}× |

${verdict}`;

writeBenchSection('compile', section);
console.log(
  `compileRepo: ${compileRate} files/s (median ${compileMedian}); parseMtr: ${syntaxRate} files/s; JSON.parse: ${parseRate} files/s; ratio ${ratio}x`,
);
console.log(`compile ms per round: ${compileTimes.map((t) => t.toFixed(0)).join(', ')}`);
console.log(`load average ${load1.toFixed(2)} ${load5.toFixed(2)} on ${cpus} CPUs`);
