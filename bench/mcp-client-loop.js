// node bench/mcp-client-loop.js — the MCP SDK `Client`'s CPU a `tools/call` with the network taken out (issue #29):
// the transport's `fetch` answers at once with the answer `mt serve` gives bench:calls' tool, in a loop (20,000 calls a
// round, 5 rounds after one of warm-up), for variants of that answer: as sent before #29's last change (`; charset=utf-8`),
// as sent now, and two not adopted (no `isError: false`; two headers instead of six). Prints µs a call by round and the
// median. Compare with bench/mcp-client.bench.js, where the same path runs between real calls (docs/performance.md at 3251c0c).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
const text = JSON.stringify({ id: 'A-1001', status: 'shipped', total: 12.5, items: [{ sku: 'MUG-1', qty: 1 }] });
function variant(ct, extraHeaders, result) {
  const sid = 'x';
  const fetchLike = async (_url, init) => {
    const req = JSON.parse(init.body);
    new Headers(init.headers).forEach(() => {});
    let body;
    if (req.method === 'initialize')
      body = {
        jsonrpc: '2.0',
        id: req.id,
        result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } },
      };
    else if (req.id === undefined)
      return { ok: true, status: 202, headers: new Headers(), body: { cancel: async () => {} } };
    else body = { jsonrpc: '2.0', id: req.id, result };
    const t = JSON.stringify(body);
    const headers = new Headers();
    for (const [k, v] of Object.entries({ 'content-type': ct, 'mcp-session-id': sid, ...extraHeaders }))
      headers.set(k, v);
    return {
      ok: true,
      status: 200,
      headers,
      body: { cancel: async () => {} },
      text: async () => t,
      json: async () => JSON.parse(t),
    };
  };
  return fetchLike;
}
const std = {
  connection: 'keep-alive',
  'content-length': '191',
  date: new Date().toUTCString(),
  'keep-alive': 'timeout=72',
};
const variants = {
  'before: charset, isError false, 6 headers': variant('application/json; charset=utf-8', std, {
    content: [{ type: 'text', text }],
    isError: false,
  }),
  'now: no charset': variant('application/json', std, { content: [{ type: 'text', text }], isError: false }),
  'no charset, no isError': variant('application/json', std, { content: [{ type: 'text', text }] }),
  'no charset, 2 headers only': variant('application/json', {}, { content: [{ type: 'text', text }], isError: false }),
};
const clients = {};
for (const [name, f] of Object.entries(variants)) {
  const client = new Client({ name: 'b', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://127.0.0.1:1/mcp'), {
      requestInit: { headers: { authorization: 'Bearer x' } },
      fetch: f,
    }),
  );
  clients[name] = client;
}
const params = { name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } };
const res = {};
for (let round = 0; round < 6; round++)
  for (const [name, client] of Object.entries(clients)) {
    const n = 20000;
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await client.callTool(params);
    const c = process.cpuUsage(t0);
    if (round === 0) continue;
    res[name] ??= [];
    res[name].push((c.user + c.system) / n);
  }
for (const [name, v] of Object.entries(res))
  console.log(name, v.map((x) => x.toFixed(1)).join(' '), 'median', v.sort((a, b) => a - b)[2].toFixed(1));
