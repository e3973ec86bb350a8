// bench:runs' one adapter between its harness and a version of Maitento: the packages of a tree (this checkout, or a
// baseline commit's tree made by bench/lib/baseline.js) loaded from that tree's own node_modules, so both versions
// are driven through the same public entry points (createEngine, startRun, the store's set-up, `mt worker`).
// 3251c0c and this checkout take the same options and arguments for everything the harness uses, so no shim per
// version is needed today; a version that differs gets its branch here, and only here.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The packages of the tree at `root` (built: its dist/), its `pg` (the one its store and pg-boss use) and its `mt`. */
export async function loadVersion(root) {
  const require = createRequire(join(root, 'package.json'));
  const load = (name) => import(pathToFileURL(require.resolve(name)).href);
  const [engine, store, egress, gateway, lang, testkit, openai, pg] = await Promise.all(
    [
      '@maitento/engine',
      '@maitento/store',
      '@maitento/egress',
      '@maitento/gateway',
      '@maitento/lang',
      '@maitento/testkit',
      '@ai-sdk/openai',
      'pg',
    ].map(load),
  );
  return {
    root,
    engine,
    store,
    egress,
    gateway,
    lang,
    testkit,
    createOpenAI: openai.createOpenAI,
    pg: pg.default ?? pg,
    mt: join(root, 'packages/cli/bin/mt.js'),
  };
}

export const NS = 'bench';

/**
 * The bench's repository, its tool a GET of `upstream`: `support` (model → tool → model → tool → model), `lookup`
 * (one tool call: model → tool → model), a 20-turn `chat`, and `router` handing work to two child agents.
 */
export function repoFiles(upstream) {
  const oneShot = (name, agent, what) => ({
    path: `interactions/one-shot/${name}.mtr`,
    content: `agent = { name = "${agent}" agent = @ref("${name}-agent") }\ntask = "A customer writes: %%message%%"\ninputs.prompts = [ { name = "message" description = "${what}" required = true } ]\n`,
  });
  return [
    {
      path: 'agents/chat-agent.mtr',
      content: `model = "openai:fake"\ninstructions = "You chat with the customer."\n`,
    },
    {
      path: 'interactions/conversation/chat.mtr',
      content: `agent = { name = "Chat" agent = @ref("chat-agent") }\ntask = "A customer starts a chat: %%message%%"\ninputs.prompts = [ { name = "message" description = "The first message" required = true } ]\n`,
    },
    {
      path: 'agents/router-agent.mtr',
      content: `model = "openai:fake"\ninstructions = "You route work to two helpers."\nfunctions = [ { agent = @ref("helper-a-agent") }, { agent = @ref("helper-b-agent") } ]\n`,
    },
    ...['a', 'b'].map((x) => ({
      path: `agents/helper-${x}-agent.mtr`,
      content: `model = "openai:fake"\ninstructions = "You help the router."\nsummary = "Helper ${x}"\n`,
    })),
    oneShot('router', 'Router', 'What the customer wrote'),
    {
      path: 'connectors/open-api/orders-get.mtr',
      content: `method = "GET"\nurl = "${upstream}/orders/{orderId}"\ndescription = "One order by its id"\nauth = "Header"\nparameters.path = [ { name = "orderId" description = "The order id" type = "string" } ]\n`,
    },
    {
      path: 'external-operations/open-api/get-order.mtr',
      content: `connector = @ref("orders-get")\nguidance = "Looks up an order by its id."\nauth = { header = "X-Api-Key" secret = @ref("orders-key") }\n`,
    },
    {
      path: 'agents/support-agent.mtr',
      content: `model = "openai:fake"\ninstructions = "Help customers with their orders."\nfunctions = [ { ref = @ref("get-order") } ]\n`,
    },
    oneShot('support', 'Support', 'What the customer wrote'),
    {
      path: 'agents/lookup-agent.mtr',
      content: `model = "openai:fake"\ninstructions = "You look up one order."\nfunctions = [ { ref = @ref("get-order") } ]\n`,
    },
    oneShot('lookup', 'Lookup', 'What the customer wrote'),
  ];
}

/**
 * A fresh database on the version's own migrations, namespace NS with the secret `orders-key` and the bench's
 * repository deployed (its tool calling `upstream`). Answers `{ database, db, secretKey, egress }`.
 */
export async function setUpDatabase(v, name, upstream, secretKey) {
  const database = await v.testkit.createTestDatabase(name);
  const db = v.store.createPgDb(database.url);
  const egress = v.egress.createEgressPolicy({ allow: '127.0.0.1/32' });
  const compiled = v.lang.compileRepo(repoFiles(upstream), { egress, knownSecrets: ['orders-key'] });
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
  await v.store.migrate(db);
  await v.store.createNamespace(db, NS);
  await v.store.createSecret(db, secretKey, NS, { name: 'orders-key', value: 'sk-bench' });
  await v.store.deploy(db, NS, compiled);
  return { database, db, egress };
}
