// The repository's example config, as the demo deploys it: the orders connectors call the local orders API
// instead of orders.example.com, and the support agent uses the model the demo picked.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readConfigRepo } from '@maitento/lang';

const ORDERS_HOST = 'https://orders.example.com';
const SUPPORT_AGENT = 'agents/support-agent.mtr';
/** The scripted stand-in's name: `scripted-models/support-demo.json` of the repository. */
export const SCRIPT_NAME = 'support-demo';

/**
 * Picks the support agent's model: `--model`, else OpenAI or Anthropic when their key is set, else the
 * scripted stand-in. Returns `{ model, why }`.
 */
export function pickModel(flagModel, env = process.env) {
  if (flagModel) return { model: flagModel, why: 'chosen with --model', scripted: flagModel.startsWith('scripted:') };
  if (env.OPENAI_API_KEY) return { model: 'openai:gpt-4o-mini', why: 'OPENAI_API_KEY is set', scripted: false };
  if (env.ANTHROPIC_API_KEY) {
    return { model: 'anthropic:claude-haiku-4-5', why: 'ANTHROPIC_API_KEY is set', scripted: false };
  }
  return {
    model: `scripted:${SCRIPT_NAME}`,
    why: 'neither OPENAI_API_KEY nor ANTHROPIC_API_KEY is set',
    scripted: true,
  };
}

/**
 * Reads the example config repo at `root` and returns its files with the orders API's host replaced by
 * `ordersUrl` and the support agent's model by `model` (nothing is written to the repository). The platform
 * tools (`auth = "Maitento"`) name paths on the platform: they deploy to the demo's server unchanged.
 */
export async function demoRepoFiles(root, { ordersUrl, model }) {
  const files = await readConfigRepo(root);
  return files.map((file) => {
    let content = file.content.replaceAll(ORDERS_HOST, ordersUrl);
    if (file.path === SUPPORT_AGENT) content = content.replace(/^model = ".*"$/m, `model = "${model}"`);
    return { path: file.path, content };
  });
}

/**
 * The scripted stand-in's folder for the demo (`MT_SCRIPTED_MODELS`), in the demo's data folder: a script
 * cannot read the answer a person gives, so the demo plays a copy of the repository's script and switches
 * it to the redraft (`support-demo-redraft.json`) when the refund is rejected.
 */
export function prepareScripts(root, dataDir) {
  const dir = join(dataDir, 'scripted-models');
  mkdirSync(dir, { recursive: true });
  const source = (name) => join(root, 'scripted-models', `${name}.json`);
  const target = join(dir, `${SCRIPT_NAME}.json`);
  cpSync(source(SCRIPT_NAME), target);
  let rejections = 0;
  return {
    dir,
    /** Called before a rejection is sent: the next turns the stand-in plays are the redraft's. */
    rejected() {
      rejections++;
      if (rejections === 1) cpSync(source(`${SCRIPT_NAME}-redraft`), target);
      else {
        // After a second rejection the stand-in gives up politely instead of asking again.
        const turns = [
          { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': 'A-1001' } } }] },
          ...Array.from({ length: rejections }, () => ({ toolCalls: [{ name: 'refund-order', arguments: {} }] })),
          {
            text: "I'm sorry, I could not make a refund for your kettle just now. A colleague will look at it and write to you within a working day.",
          },
        ];
        writeFileSync(target, JSON.stringify(turns, null, 2));
      }
    },
  };
}
