// The example orders API of the demo, on 127.0.0.1: what connectors/open-api/orders-get-order.mtr and
// orders-refund-order.mtr describe (GET /orders/{orderId}, POST /orders/{orderId}/refund, a key in X-Api-Key).
import { createServer } from 'node:http';

/** The shop's one order the demo talks about. */
function sampleOrders() {
  return new Map([
    [
      'A-1001',
      {
        id: 'A-1001',
        status: 'Delivered',
        deliveredAt: '2026-11-28',
        currency: 'EUR',
        items: [
          { sku: 'KT-17', name: 'Glass kettle 1.7 l', quantity: 1, price: 49.9 },
          { sku: 'CUP-4', name: 'Set of 4 tea cups', quantity: 1, price: 24.0 },
        ],
        shipping: 4.9,
        total: 78.8,
        refunded: 0,
        deliveryAddress: { name: 'Sam Taylor', city: 'Leeds', country: 'GB' },
      },
    ],
  ]);
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readJson(req) {
  return new Promise((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(text));
      } catch {
        resolve(undefined);
      }
    });
  });
}

/**
 * Starts the orders API on 127.0.0.1 (a free port). Every request it answers is told to `onRequest`
 * (`{ method, path, status, body }`) so the demo can show it; refunds made are kept in `refunds`.
 */
export async function startOrdersApi({ apiKey, onRequest = () => {} }) {
  const orders = sampleOrders();
  const refunds = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const answer = (status, body, requestBody) => {
      onRequest({ method: req.method, path: url.pathname, status, body: requestBody });
      send(res, status, body);
    };
    if (req.headers['x-api-key'] !== apiKey) return answer(401, { error: 'a valid X-Api-Key is required' });
    const match = /^\/orders\/([^/]+)(\/refund)?$/.exec(url.pathname);
    const order = match ? orders.get(decodeURIComponent(match[1])) : undefined;
    if (!match) return answer(404, { error: 'no such route' });
    if (req.method === 'GET' && !match[2]) {
      return order ? answer(200, order) : answer(404, { error: `no order ${match[1]}` });
    }
    if (req.method === 'POST' && match[2]) {
      const body = await readJson(req);
      if (!order) return answer(404, { error: `no order ${match[1]}` }, body);
      const amount = body?.amount;
      if (typeof amount !== 'number' || amount <= 0 || typeof body?.reason !== 'string') {
        return answer(400, { error: 'amount (a positive number) and reason (text) are required' }, body);
      }
      if (order.refunded + amount > order.total) {
        return answer(422, { error: `only ${(order.total - order.refunded).toFixed(2)} can still be refunded` }, body);
      }
      order.refunded = Math.round((order.refunded + amount) * 100) / 100;
      const refund = { id: `R-${refunds.length + 1}`, orderId: order.id, amount, reason: body.reason };
      refunds.push(refund);
      return answer(201, { ...refund, status: 'Refunded', orderRefundedTotal: order.refunded }, body);
    }
    return answer(405, { error: `${req.method} is not allowed here` });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    refunds,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
