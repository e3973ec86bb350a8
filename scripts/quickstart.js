#!/usr/bin/env node
// `npm start`: the quick start. Starts a Maitento server on an embedded database, deploys this repository's
// example config, and runs the support desk on an example orders API, stopping to ask a person before the
// refund is made. `npm start -- --yes` approves without asking (CI); `--help` lists the options.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer as createNetServer } from 'node:net';
import { parseArgs } from 'node:util';
import { demoRepoFiles, pickModel, prepareScripts } from './quickstart/example-repo.js';
import { startOrdersApi } from './quickstart/orders-api.js';
import { createRunPrinter } from './quickstart/show-run.js';
import {
  ask,
  detail,
  indentJson,
  note,
  say,
  startProgress,
  step,
  stopAsking,
  withProgress,
} from './quickstart/terminal.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STEPS = 5;
const CUSTOMER_MESSAGE =
  "Hello, my order A-1001 arrived today, but the glass kettle's lid is cracked. Can I have my money back for it?";
const USAGE = `Usage: npm start [-- options]

Runs the Maitento quick start: a server on an embedded database, the example config deployed, and the
support desk answering a customer, with a person approving the refund in this terminal.

Options:
  --yes            approve the refund without asking (for CI and scripts)
  --data <dir>     the demo's data folder (default .maitento/demo)
  --model <spec>   the support agent's model, such as openai:gpt-4o-mini (default: OpenAI or Anthropic when
                   OPENAI_API_KEY or ANTHROPIC_API_KEY is set, else the scripted stand-in)
  --help           this text

The example config repo has three more files the demo deploys but does not run; to try them, deploy the repo to
a server of your own (\`npx mt serve\`, \`npx mt deploy .\`), or follow docs/tutorials/06-conversations-and-sub-agents.md:
  interactions/conversation/support-chat.mtr  a conversation: the support desk answers, then waits for the
                                              customer's next message (\`npx mt interaction-chat support-chat\`)
  interactions/one-shot/triage.mtr            agents as tools: a triage agent hands billing questions to
                                              agents/billing-agent.mtr, whose refunds wait for approval
  interactions/one-shot/check-refund.mtr      an answer in a declared shape: the result is a JSON object
                                              matching check-refund.schema.json, not prose`;

/** A port nobody listens on now, for the demo server, whose own URL its handbook search calls. */
async function freePort() {
  const probe = createNetServer();
  await new Promise((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address();
  await new Promise((done) => probe.close(done));
  return port;
}

function parseFlags() {
  try {
    const { values } = parseArgs({
      options: {
        yes: { type: 'boolean', short: 'y', default: false },
        data: { type: 'string', default: join(ROOT, '.maitento', 'demo') },
        model: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
    return values;
  } catch (error) {
    say(`error: ${error.message}`, '', USAGE);
    process.exit(2);
  }
}

/** The demo's own admin key, kept in its data folder so a second `npm start` uses the same one. */
async function demoAdminKey(store, db, file, key) {
  if (!(await store.authenticateApiKey(db, key))) {
    await store.createApiKey(db, store.DEFAULT_NAMESPACE, { role: 'admin', name: 'quick start', key });
  }
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/** The secret the orders tools send in X-Api-Key: created, or given the new value when it exists. */
async function ordersSecret(mt, value) {
  const existing = (await mt.secrets.list()).find((secret) => secret.name === 'orders-api-key');
  if (existing) return mt.secrets.rotate(existing.id, { value });
  return mt.secrets.create({ name: 'orders-api-key', value });
}

/**
 * Follows an approval while the terminal asks about it: resolves with the approval once it is no longer Pending
 * (answered in the console or through REST, or expired), polling every half second until `signal` (the terminal's
 * own answer) stops it.
 */
async function answeredElsewhere(mt, approvalId, signal) {
  while (!signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (signal.aborted) return undefined;
    const approval = await mt.approvals.get(approvalId, { timeoutMs: 10_000 }).catch(() => undefined);
    if (approval && approval.status !== 'Pending') return approval;
  }
  return undefined;
}

/**
 * Asks the person at the terminal (or approves, with --yes); returns what to send, or `{ elsewhere: true }` when
 * `signal` says the approval was answered elsewhere (the console, REST) while the question waited.
 */
async function decide(flags, approval, signal) {
  if (flags.yes) {
    detail('--yes was given: approving without asking.');
    return { approve: true };
  }
  for (;;) {
    const answer = await ask('      Approve this refund? Type y to approve, n to reject it with a reason: ', signal);
    if (answer === null) return { elsewhere: true };
    if (answer === undefined) return { noAnswer: true };
    const text = answer.trim().toLowerCase();
    if (text === 'y' || text === 'yes') return { approve: true };
    if (text === 'n' || text === 'no') {
      const suggestion = 'Too much for a cracked lid: offer a partial refund and let the customer keep the kettle.';
      const reason = await ask(`      Why? The agent reads this and redrafts. [${suggestion}] `, signal);
      if (reason === null) return { elsewhere: true };
      if (reason === undefined) return { noAnswer: true };
      return { approve: false, reason: reason.trim() || suggestion };
    }
    detail(`Please type y or n (the refund of ${approval.functionName} waits until you do).`);
  }
}

async function main() {
  const flags = parseFlags();
  if (flags.help) return say(USAGE);
  if (
    !existsSync(join(ROOT, 'packages/server/dist/index.js')) ||
    !existsSync(join(ROOT, 'packages/sdk/dist/index.js'))
  ) {
    say('The packages are not built yet: run `npm install` first (it installs and builds everything).');
    process.exitCode = 1;
    return;
  }
  const dataDir = resolve(flags.data);
  const inCwd = !relative(process.cwd(), dataDir).startsWith('..');
  const shownData = inCwd ? relative(process.cwd(), dataDir) || '.' : dataDir;
  mkdirSync(dataDir, { recursive: true });
  const { model, why, scripted } = pickModel(flags.model);

  say(
    'Maitento quick start',
    '',
    'Maitento lets an AI agent call HTTP APIs safely: each tool call becomes exactly one real HTTP call that',
    'Maitento checks and signs with a secret the agent never sees, and calls that move money wait for a person.',
    'This demo runs a support desk for a shop: a customer writes about a damaged order, the agent looks the',
    'order up and asks for a refund, and you approve or reject it here.',
  );

  // 1. The upstream API the tools call.
  step(1, STEPS, "Starting the example orders API (a stand-in for the shop's real API)");
  const ordersKey = `demo-shop-${randomBytes(12).toString('hex')}`;
  const ordersRequests = [];
  const orders = await startOrdersApi({ apiKey: ordersKey, onRequest: (r) => ordersRequests.push(r) });
  detail(`Listening on ${orders.url}, with one order, A-1001 (a glass kettle and tea cups).`);
  note('The example connectors (connectors/open-api/orders-*.mtr) call https://orders.example.com; the demo');
  note(`deploys a copy of them that calls ${orders.url} instead.`);

  // The demo's settings, for this process only: its own embedded database, and the one local address allowed.
  const scripts = prepareScripts(ROOT, dataDir);
  Object.assign(process.env, {
    DATABASE_URL: '',
    MT_SECRET_KEY: '',
    MT_SECRET_KEY_PREVIOUS: '',
    MT_BOOTSTRAP_KEY: '',
    MT_EGRESS_ALLOW: '127.0.0.1/32',
    MT_SCRIPTED_MODELS: scripts.dir,
  });

  // 2. The server, with its worker, on PGlite.
  step(2, STEPS, 'Starting the Maitento server');
  detail(`Database: PGlite, PostgreSQL embedded in this process, with its data in ${shownData}`);
  detail('(its own folder, so it does not touch the data of `npx mt serve`).');
  note('Tools may only call public internet addresses. For this demo only, MT_EGRESS_ALLOW=127.0.0.1/32 lets');
  note('them call the local orders API; never set it that wide on a real server.');
  const firstStart = !existsSync(join(dataDir, 'pglite', 'PG_VERSION'));
  if (firstStart) detail('First start: creating the database takes 10 to 60 s. Later starts take a few seconds.');
  const [serverPkg, store, { Maitento }] = await Promise.all([
    import('@maitento/server'),
    import('@maitento/store'),
    import('@maitento/sdk'),
  ]);
  // The demo's admin key: the first key of a new database, or made below when the database has others.
  const keyFile = join(dataDir, 'demo-admin.key');
  const demoKey = (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '') || store.generateApiKey();
  // The server's own URL is its platform URL (what the example's file tools, auth = "Maitento", call), so
  // the port is chosen before it starts.
  const port = await freePort();
  const running = await withProgress(firstStart ? 'Creating and starting the database' : 'Starting', () =>
    serverPkg.startServer({
      port,
      platformOrigin: `http://127.0.0.1:${port}`,
      dataDir,
      bootstrapKey: demoKey,
      logger: { level: 'error', stream: process.stderr },
      message: (line) => note(line),
    }),
  );
  const stop = async () => {
    stopAsking();
    await running.close();
    await orders.close();
  };
  process.once('SIGINT', () => {
    say('', 'Interrupted: stopping the server and the orders API.');
    stop().finally(() => process.exit(130));
  });
  try {
    const apiKey = await demoAdminKey(store, running.db, keyFile, demoKey);
    detail(`The REST API listens on ${running.url}; the demo talks to it with the SDK (@maitento/sdk).`);
    note(`Its admin key is in ${join(shownData, 'demo-admin.key')}.`);
    note(`The web console is at ${running.url}/console; sign in there with that key.`);
    const mt = new Maitento({ baseUrl: running.url, apiKey });

    // 3. The secret and the config.
    step(3, STEPS, 'Storing the orders API key as a secret, and deploying the example config');
    const secret = await ordersSecret(mt, ordersKey);
    detail(`Secret orders-api-key stored (id ${secret.id}). The server keeps it encrypted and sends it in the`);
    detail('X-Api-Key header of each orders call; the agent, its model, the run and its logs never see it.');
    const files = await demoRepoFiles(ROOT, { ordersUrl: orders.url, model });
    const plan = await mt.deploy.create({ files });
    const counts = {};
    for (const change of plan.changes) counts[change.action] = (counts[change.action] ?? 0) + 1;
    detail(`Deployed ${files.length} files of connectors/, external-operations/, agents/ and interactions/:`);
    detail(
      Object.entries(counts)
        .map(([action, n]) => `${n} ${action}`)
        .join(', ') || 'nothing changed',
    );

    // 4. The run, stopping for the approval.
    step(4, STEPS, 'Running the support desk (interaction support-any-shop)');
    detail(`The agent's model: ${model} (${why}).`);
    if (scripted) {
      note('No model key is set, so a scripted stand-in plays the agent: scripted-models/support-demo.json. It');
      note('answers the same every time; a script cannot read your answer, so after a rejection the demo switches');
      note('it to its redraft, scripted-models/support-demo-redraft.json. Set OPENAI_API_KEY (or ANTHROPIC_API_KEY)');
      note('and run `npm start` again to watch a real model do the same work.');
    }
    detail('The customer writes:');
    detail(`  "${CUSTOMER_MESSAGE}"`);
    const printer = createRunPrinter(mt);
    let progress = startProgress('The agent is working');
    let noAnswer = false;
    const run = await mt.interactionRuns.run('support-any-shop', {
      inputs: { message: CUSTOMER_MESSAGE, shopKey: secret.id },
      onWaiting: async (waiting) => {
        progress.stop();
        await printer.catchUp(waiting.id);
        const approval = waiting.pendingApproval;
        say('', '      >>> Approval needed');
        detail(`The agent wants to call ${approval.functionName} with:`);
        say(indentJson(JSON.parse(approval.argumentsJson)));
        detail('Nothing has been sent to the orders API yet. If you approve, exactly this call is made, once.');
        detail(`Approve it in the terminal, or at ${running.url}/console/approvals (sign in with the admin key).`);
        // The prompt follows the approval: when someone answers it elsewhere, the terminal stops asking.
        const asked = new AbortController();
        const watched = new AbortController();
        const elsewhere = answeredElsewhere(mt, approval.id, watched.signal).then((answered) => {
          if (answered) asked.abort();
          return answered;
        });
        const choice = await decide(flags, approval, asked.signal);
        watched.abort();
        const answered = await elsewhere;
        if (choice.elsewhere) {
          const who = answered.answeredBy ? `key ${answered.answeredBy.keyName}` : 'someone';
          const what =
            answered.status === 'Rejected'
              ? `rejected (${answered.reason ?? 'no reason'})`
              : answered.status.toLowerCase();
          detail(`Answered elsewhere: ${what} by ${who}. The terminal stops asking; the run goes on.`);
          if (scripted && answered.status === 'Rejected') scripts.rejected();
        } else if (choice.noAnswer) {
          noAnswer = true;
          detail('No answer (the input ended): cancelling the run. `npm start -- --yes` approves without asking.');
          await mt.interactionRuns.cancel(waiting.id);
        } else {
          if (!choice.approve && scripted) scripts.rejected();
          const answer = choice.approve
            ? mt.interactionRuns.approve(waiting.id, { approvalId: approval.id })
            : mt.interactionRuns.reject(waiting.id, { approvalId: approval.id, reason: choice.reason });
          // Answered elsewhere in the moment between the terminal's answer and this one: the other answer stands.
          await answer.catch((error) => {
            if (error.code !== 'api:approvals:already-answered') throw error;
            detail('Someone answered it elsewhere a moment before you: their answer stands; the run goes on.');
          });
        }
        progress = startProgress('The agent is working');
      },
    });
    progress.stop();
    await printer.catchUp(run.id);

    // 5. What happened.
    step(5, STEPS, 'Done');
    detail(`Run ${run.id}: ${run.status}.`);
    detail(`The orders API received ${ordersRequests.length} requests:`);
    for (const r of ordersRequests) {
      detail(`  ${r.method} ${r.path} -> ${r.status}${r.body ? ` ${JSON.stringify(r.body)}` : ''}`);
    }
    if (orders.refunds.length === 0) detail('It made no refund.');
    for (const refund of orders.refunds) {
      detail(`It made refund ${refund.id}: ${refund.amount.toFixed(2)} EUR on order ${refund.orderId}.`);
    }
    say(
      '',
      'Next:',
      '  - the files the demo deployed: connectors/, external-operations/, agents/, interactions/ (README.md)',
      '  - how runs and approvals work: docs/runs.md; the SDK this demo uses: packages/sdk/README.md',
      `  - this demo's code: scripts/quickstart.js; its data: ${shownData} (delete it to start afresh)`,
      '  - your own server: `npx mt serve`, then `npx mt deploy .` (README.md, "Set up and run")',
    );
    if (run.status !== 'Completed' || noAnswer) process.exitCode = 1;
  } finally {
    await stop();
  }
}

main().catch((error) => {
  say('', `The quick start failed: ${error.code ? `${error.code}: ` : ''}${error.message}`);
  if (error.hint) say(`Hint: ${error.hint}`);
  process.exit(1);
});
