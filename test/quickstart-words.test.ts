import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRunPrinter } from '../scripts/quickstart/show-run.js';

// issue #22, item 7: the demo's "Approved by bootstrap" says what bootstrap is.
afterEach(() => vi.restoreAllMocks());

function printed(by: unknown, event?: { type: string; data: unknown }): string {
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  createRunPrinter({}).print({
    seq: 1,
    ...(event ?? { type: 'approval-answered', data: { decision: 'approve', by } }),
  });
  vi.restoreAllMocks();
  return out.join('');
}

describe('the demo names who approved', () => {
  it('says that bootstrap is the first admin key', () => {
    expect(printed({ keyId: 'k1', keyName: 'bootstrap' })).toContain(
      "Approved by bootstrap (the name of the first admin key, made at the server's first start): the exact call shown is made now.",
    );
  });

  it('names any other key as it is', () => {
    expect(printed({ keyId: 'k2', keyName: 'back-office' })).toContain('Approved by back-office: the exact call');
  });
});

describe('the demo explains a version above 1', () => {
  const started = (version: number) =>
    printed(undefined, { type: 'run-started', data: { interaction: { name: 'support-any-shop', version } } });

  it('says why a rerun runs version 2', () => {
    expect(started(2)).toContain(
      'Run started: interaction support-any-shop version 2. (A deploy that changes a resource stores it as a new version;',
    );
  });

  it('says nothing more about version 1', () => {
    expect(started(1).trim()).toBe('Run started: interaction support-any-shop version 1.');
  });
});

// issue #21: the three example files the demo does not run are named in its --help, with where to learn them.
describe('npm start -- --help', () => {
  it('names the conversation, the triage agent and the result schema, and the tutorial that runs them', async () => {
    const { execFileSync } = await import('node:child_process');
    const help = execFileSync(process.execPath, ['scripts/quickstart.js', '--help'], { encoding: 'utf8' });
    for (const file of [
      'interactions/conversation/support-chat.mtr',
      'interactions/one-shot/triage.mtr',
      'interactions/one-shot/check-refund.mtr',
      'docs/tutorials/06-conversations-and-sub-agents.md',
    ])
      expect(help).toContain(file);
    expect(help).toContain('npx mt interaction-chat support-chat');
  });
});

// issue #45, test 6: from a clone to a finished demo, the README's quick start is at most 3 commands on a machine
// whose Node.js is older, 2 on Node.js 24: counted from the README's first sh block under "## Quick start", in its
// order (the Node.js step first, marked as only for an older Node.js).
describe("the README's quick start", () => {
  it('is 2 commands on Node.js 24 and 3 on an older one, in that order', async () => {
    const { readFileSync } = await import('node:fs');
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.split('\n## Quick start\n')[1]?.split('\n## ')[0] ?? '';
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const commands = block
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    const onlyOlder = commands.filter((line) => /#.*only if `node --version` is older/.test(line));
    expect(commands.length).toBeLessThanOrEqual(3);
    expect(commands.length - onlyOlder.length).toBeLessThanOrEqual(2);
    expect(commands.map((line) => line.split('#')[0]!.trim())).toEqual([
      'source scripts/node.sh',
      'npm install',
      'npm start',
    ]);
    expect(onlyOlder).toHaveLength(1);
    expect(commands[0]).toBe(onlyOlder[0]);
  });
});
