// `npm run bench:compile`: how fast the config compiler turns .mtr files into checked resources, against
// JSON.parse of the same data in the same run. Imports the built @maitento/lang (run `npx tsc -b` first) and
// writes its figures into docs/performance.md between the bench:compile markers.
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { compileRepo, parseMtr } from '@maitento/lang';

const FILES = 1000;
const ROUNDS = 5;

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

// Each round compiles a fresh repo (new names, new schemas) so that no cache of an earlier round helps.
const warm = generate(1_000_000);
compileRepo(warm.map((f) => ({ path: f.path, content: f.mtr })));

const compileTimes = [];
const parseTimes = [];
const syntaxTimes = [];
let lines = 0;
for (let round = 0; round < ROUNDS; round++) {
  const files = generate(round * FILES * 2);
  const repoFiles = files.map((f) => ({ path: f.path, content: f.mtr }));
  const jsonTexts = files.map((f) => JSON.stringify(f.json, null, 2));
  lines = files.reduce((n, f) => n + f.mtr.split('\n').length, 0);
  let t = performance.now();
  for (const f of repoFiles) parseMtr(f.content, f.path);
  syntaxTimes.push(performance.now() - t);
  t = performance.now();
  const repo = compileRepo(repoFiles);
  compileTimes.push(performance.now() - t);
  if (!repo.ok) {
    console.error(repo.diagnostics.slice(0, 5));
    throw new Error('the generated repo does not compile');
  }
  t = performance.now();
  for (const text of jsonTexts) JSON.parse(text);
  parseTimes.push(performance.now() - t);
}

const compileRate = Math.round(FILES / (best(compileTimes) / 1000));
const parseRate = Math.round(FILES / (best(parseTimes) / 1000));
const syntaxRate = Math.round(FILES / (best(syntaxTimes) / 1000));
const ratio = (parseRate / compileRate).toFixed(1);
const section = `<!-- bench:compile -->
\`npm run bench:compile\` (bench/compile.bench.js): ${FILES} generated files (half connectors with their own
request and response schemas, half tools with bindings, auth and a secret reference; ${Math.round(lines / FILES)}
lines a file on average), compiled with \`compileRepo\` (lex, parse, trees, shapes, references, every check
including ajv meta-schema validation of each distinct schema, URL address rules, tool definitions) in one process, best of
${ROUNDS} rounds, each round a fresh repo so no cache helps; against \`JSON.parse\` of the same data as JSON.

| What | Files/s |
| --- | --- |
| \`compileRepo\` | ${compileRate.toLocaleString('en-US')} |
| \`parseMtr\` alone (lex and parse, no checks) | ${syntaxRate.toLocaleString('en-US')} |
| \`JSON.parse\` of equivalent JSON | ${parseRate.toLocaleString('en-US')} |
| ratio (JSON.parse / compileRepo) | ${ratio}× |

Measured on Node.js ${process.versions.node}. The aim was 10,000 files/s; it is not reached. Profiled: \`ajv.compile\`
(code generation, about 1 ms a schema) was 70% of the time, so the compiler now validates each schema against
the meta-schema and checks \`$ref\`s and patterns itself, caching verdicts by schema text (3x faster); of what is
left, lexing and parsing alone is the row above, and most of the rest is garbage collection of the per-file
trees and span maps.
<!-- /bench:compile -->`;

const docPath = new URL('../docs/performance.md', import.meta.url);
const doc = readFileSync(docPath, 'utf8');
const updated = doc.replace(/<!-- bench:compile -->[\s\S]*?<!-- \/bench:compile -->/, section);
writeFileSync(docPath, updated);
console.log(
  `compileRepo: ${compileRate} files/s; parseMtr: ${syntaxRate} files/s; JSON.parse: ${parseRate} files/s; ratio ${ratio}x`,
);
console.log(`compile ms per round: ${compileTimes.map((t) => t.toFixed(0)).join(', ')}`);
