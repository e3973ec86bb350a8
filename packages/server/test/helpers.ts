import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Resolver } from '@maitento/egress';
import { createEgressPolicy } from '@maitento/egress';
import { createServer, type ServerOptions } from '@maitento/server';
import { createPgDb, type Db } from '@maitento/store';
import { createTestDatabase, type TestDatabase } from '@maitento/testkit';
import type { FastifyInstance } from 'fastify';

/** A server on its own fresh database, its admin key, and every log line it wrote. */
export interface TestServer {
  app: FastifyInstance;
  db: Db;
  adminKey: string;
  logs: string[];
  close(): Promise<void>;
}

/** A resolver the test controls: the named public-looking hosts resolve to 127.0.0.1. */
export function localResolver(hosts: string[]): Resolver {
  return async (hostname) => {
    if (!hosts.includes(hostname)) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address: '127.0.0.1', family: 4 }];
  };
}

/**
 * Starts `createServer` on a new test database, with only 127.0.0.1 allowed beyond the public internet;
 * `server` adds to (or overrides) the options given to `createServer`, such as `idempotencyLeaseSeconds`.
 */
export async function startTestServer(
  options: { hosts?: string[]; server?: Partial<ServerOptions> } = {},
): Promise<TestServer> {
  const database: TestDatabase = await createTestDatabase('mt_server', { migrated: true });
  const db = createPgDb(database.url);
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const adminKey = `mt_${randomBytes(24).toString('base64url')}`;
  const app = await createServer({
    db,
    secretKey: randomBytes(32),
    egress: createEgressPolicy({ allow: '127.0.0.1/32' }),
    resolver: localResolver(options.hosts ?? []),
    bootstrapKey: adminKey,
    logger: { level: 'debug', stream },
    ...options.server,
  });
  return {
    app,
    db,
    adminKey,
    logs,
    async close() {
      await app.close();
      await db.close();
      await database.drop();
    },
  };
}

/** The headers of a request made with `key`. */
export function auth(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

/** A small config repo like the sample one: weather (no auth) and orders (a Header secret). */
export function sampleFiles(options: { weatherUrl?: string; ordersUrl?: string } = {}): {
  path: string;
  content: string;
}[] {
  const weatherUrl = options.weatherUrl ?? 'https://api.open-meteo.com/v1/forecast';
  const ordersUrl = options.ordersUrl ?? 'https://orders.example.com/orders/{orderId}';
  return [
    {
      path: 'connectors/open-api/open-meteo-forecast.mtr',
      content: `// The connector: the HTTP call itself.
method = "GET"
url = "${weatherUrl}"
description = "Current weather for a latitude and longitude, from Open-Meteo"
parameters.query = [
  { name = "latitude" description = "Latitude in decimal degrees" type = "number" },
  { name = "longitude" description = "Longitude in decimal degrees" type = "number" },
  { name = "current" description = "Comma-separated list of current weather variables" },
]
`,
    },
    {
      path: 'external-operations/open-api/current-weather.mtr',
      content: `connector = @ref("open-meteo-forecast")
bindings.query:current = "temperature_2m,wind_speed_10m"
guidance = "Gets the current temperature and wind speed for a place."
`,
    },
    {
      path: 'connectors/open-api/orders-get.mtr',
      content: `method = "GET"
url = "${ordersUrl}"
description = "One order by its id"
auth = "Header"
parameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]
`,
    },
    {
      path: 'external-operations/open-api/get-order.mtr',
      content: `connector = @ref("orders-get")
guidance = "Looks up an order by its id."
auth = { header = "X-Api-Key" secret = @ref("orders-key") }
`,
    },
    {
      path: 'agents/support-agent.mtr',
      content: `model = "openai:gpt-4o-mini"
instructions = "Help customers with their orders."
functions = [ { ref = @ref("get-order") } ]
`,
    },
    {
      path: 'agents/weather-agent.mtr',
      content: `model = "openai:gpt-4o-mini"
instructions = "Answer questions about the weather."
functions = [ { ref = @ref("current-weather") } ]
`,
    },
    {
      path: 'interactions/one-shot/support.mtr',
      content: `agent = { name = "Support" agent = @ref("support-agent") }
task = "A customer writes: %%message%%"
inputs.prompts = [ { name = "message" description = "What the customer wrote" required = true } ]
`,
    },
  ];
}

/** Creates the secret `name` in the key's namespace (the server's admin key by default) and expects 201. */
export async function createSecret(server: TestServer, name: string, value: string, key = server.adminKey) {
  const res = await server.app.inject({
    method: 'POST',
    url: '/v1/secrets',
    headers: auth(key),
    payload: { name, value },
  });
  if (res.statusCode !== 201) throw new Error(`creating secret ${name} answered ${res.statusCode}: ${res.body}`);
  return res.json() as { id: string; name: string };
}

/** Deploys `files` (the sample repo by default) with the key (the server's admin key by default), expecting 200. */
export async function deployOk(server: TestServer, files = sampleFiles(), key = server.adminKey) {
  const res = await server.app.inject({ method: 'POST', url: '/v1/deploy', headers: auth(key), payload: { files } });
  if (res.statusCode !== 200) throw new Error(`deploy answered ${res.statusCode}: ${res.body}`);
  return res.json();
}
