// A small orders API for two shops, each with its own API key (tutorials 02 and 03).
// Run it with `node orders-api.ts` (Node.js 22.18 or newer runs TypeScript as is).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

interface Order {
  id: string;
  item: string;
  paid: number;
  currency: string;
  status: string;
  refunded: number;
}

interface Shop {
  name: string;
  orders: Map<string, Order>;
}

// Each shop's key comes from the environment; a request's X-Api-Key header says which shop it is for.
const shops = new Map<string, Shop>([
  [
    process.env.TEAPOT_SHOP_KEY ?? 'teapot-key',
    {
      name: 'Teapot Shop',
      orders: new Map([
        [
          'A-1001',
          { id: 'A-1001', item: 'Glass kettle', paid: 49.9, currency: 'EUR', status: 'delivered', refunded: 0 },
        ],
      ]),
    },
  ],
  [
    process.env.CUP_SHOP_KEY ?? 'cup-key',
    {
      name: 'Cup Shop',
      orders: new Map([
        ['B-2001', { id: 'B-2001', item: 'Six tea cups', paid: 24, currency: 'EUR', status: 'shipped', refunded: 0 }],
      ]),
    },
  ],
]);

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : {};
}

const server = createServer(async (req, res) => {
  const shop = shops.get(String(req.headers['x-api-key'] ?? ''));
  if (!shop) return send(res, 401, { error: 'unknown API key' });
  const url = new URL(req.url ?? '/', 'http://localhost');
  const match = /^\/orders\/([\w-]+)(\/refund)?$/.exec(url.pathname);
  const order = match ? shop.orders.get(match[1]) : undefined;
  if (!order) return send(res, 404, { error: `no such order in ${shop.name}` });
  if (req.method === 'GET' && !match?.[2]) return send(res, 200, { shop: shop.name, ...order });
  if (req.method === 'POST' && match?.[2]) {
    const { amount, reason } = await readJson(req);
    if (typeof amount !== 'number' || amount <= 0 || amount > order.paid - order.refunded) {
      return send(res, 422, { error: `a refund must be between 0 and ${order.paid - order.refunded}` });
    }
    order.refunded += amount;
    console.log(`refunded ${amount} ${order.currency} of ${order.id}: ${reason}`);
    return send(res, 200, {
      refundId: `R-${order.id}-${order.refunded}`,
      orderId: order.id,
      amount,
      status: 'refunded',
    });
  }
  send(res, 405, { error: 'method not allowed' });
});

const port = Number(process.env.PORT ?? 3000);
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  const actual = typeof address === 'object' && address ? address.port : port;
  console.log(`orders API listening on http://127.0.0.1:${actual}`);
});
