// bench:runs' fake model (an OpenAI Chat Completions server) and upstream, in a process of their own so their CPU is
// not charged to the engine; shared by both versions. Sends `{ model, upstream }` (ports) to its parent.
import { createServer } from 'node:http';

let ids = 0;

/** The fake model's answer to `body`: by the agent's instructions (the system message) and the tool results so far. */
function reply(body) {
  const results = body.messages.filter((m) => m.role === 'tool').length;
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const text = JSON.stringify(body.messages);
  const call = (name, args) => ({ id: `call_${++ids}`, type: 'function', function: { name, arguments: args } });
  const getOrder = (n) => call('get-order', JSON.stringify({ additionalInputs: { 'path.orderId': `A-${n}` } }));
  if (system.includes('You chat with the customer.')) return { role: 'assistant', content: 'Noted, anything else?' };
  if (system.includes('You help the router.')) return { role: 'assistant', content: 'Done.' };
  if (system.includes('You route work to two helpers.')) {
    if (results >= 2) return { role: 'assistant', content: 'Both helpers answered.' };
    // The task carries the run's bench message, so the children's calls count to their parent's run.
    const key = /bench-message-\d+-/.exec(text)?.[0] ?? '';
    const hand = (agent) => call(agent, JSON.stringify({ task: `${key} part of the work` }));
    return { role: 'assistant', content: null, tool_calls: [hand('helper-a-agent'), hand('helper-b-agent')] };
  }
  const calls = system.includes('You look up one order.') ? 1 : 2;
  if (results < calls) return { role: 'assistant', content: null, tool_calls: [getOrder(results + 1)] };
  return { role: 'assistant', content: 'Both orders have shipped.' };
}

const model = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const message = reply(body);
    const answer = JSON.stringify({
      id: `chatcmpl-${++ids}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
      usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
    });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  });
});
const upstream = createServer((req, res) => {
  req.resume();
  const answer = JSON.stringify({ id: req.url.split('/').pop(), status: 'shipped' });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
  res.end(answer);
});
model.keepAliveTimeout = 60_000;
upstream.keepAliveTimeout = 60_000;
model.listen(0, '127.0.0.1', () =>
  upstream.listen(0, '127.0.0.1', () =>
    process.send?.({ model: model.address().port, upstream: upstream.address().port }),
  ),
);
process.on('disconnect', () => process.exit(0));
