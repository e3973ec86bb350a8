import { fileURLToPath } from 'node:url';
import { type CompiledRepo, compileRepo, type RepoFile, RepoChecker, readConfigRepo } from '@maitento/lang';
import { beforeAll, describe, expect, it } from 'vitest';
import { ordersConnector } from './helpers.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const options = { platformOrigin: 'http://127.0.0.1:8080' };

/** A compile result in a comparable form (definitions as entries). */
function plain(repo: CompiledRepo) {
  return { ...repo, definitions: [...repo.definitions.entries()] };
}

type Edit = (files: Map<string, string>) => void;

const REFUND_TOOL = 'external-operations/open-api/refund-order.mtr';
const REFUND_CONNECTOR = 'connectors/open-api/orders-refund-order.mtr';
const SCHEMA = 'interactions/one-shot/check-refund.schema.json';

/** Edits applied one after the other to the example repo: each result must equal compileRepo's of the same files. */
const edits: [string, Edit][] = [
  ['no change', () => {}],
  ['a syntax error in a connector', (f) => f.set(REFUND_CONNECTOR, `${f.get(REFUND_CONNECTOR)}\nurl = `)],
  ['the connector mended', (f) => f.set(REFUND_CONNECTOR, (f.get(REFUND_CONNECTOR) ?? '').replace(/\nurl = $/, ''))],
  ['a connector deleted (its tool and what uses the tool)', (f) => f.delete(REFUND_CONNECTOR)],
  ['the connector back', (f) => f.set(REFUND_CONNECTOR, baseline.get(REFUND_CONNECTOR) ?? '')],
  [
    'a tool binding a parameter its connector lacks',
    (f) => f.set(REFUND_TOOL, `${f.get(REFUND_TOOL)}bindings.path:nope = "x"\n`),
  ],
  ['the connector changed under an unchanged tool', (f) => f.set(REFUND_CONNECTOR, ordersConnector)],
  [
    'a duplicate name in another folder',
    (f) => f.set('connectors/mcp/orders-refund-order.mtr', 'url = "https://x.example.com/mcp"\n'),
  ],
  ['the duplicate gone', (f) => f.delete('connectors/mcp/orders-refund-order.mtr')],
  [
    'an agent naming an agent that names it (a cycle)',
    (f) =>
      f
        .set(
          'agents/loop-a.mtr',
          'model = "openai:gpt-4o-mini"\ninstructions = "a"\nsummary = "a"\nfunctions = [ { agent = @ref("loop-b") } ]\n',
        )
        .set(
          'agents/loop-b.mtr',
          'model = "openai:gpt-4o-mini"\ninstructions = "b"\nsummary = "b"\nfunctions = [ { agent = @ref("loop-a") } ]\n',
        ),
  ],
  ['bad JSON in a file @json names', (f) => f.set(SCHEMA, '{ "type": ')],
  [
    'the same bad JSON named twice',
    (f) => f.set('interactions/one-shot/check-again.mtr', f.get('interactions/one-shot/check-refund.mtr') ?? ''),
  ],
  ['the JSON mended', (f) => f.set(SCHEMA, '{ "type": "object" }')],
  ['the JSON deleted', (f) => f.delete(SCHEMA)],
  [
    'an unknown @ref and a misplaced file',
    (f) =>
      f
        .set(
          'agents/lost.mtr',
          'model = "openai:gpt-4o-mini"\ninstructions = "x"\nfunctions = [ { ref = @ref("no-such-tool") } ]\n',
        )
        .set('agents/sub/x/y.mtr', 'x = 1\n'),
  ],
  [
    'back to the example',
    (f) => {
      f.clear();
      for (const [path, content] of baseline) f.set(path, content);
    },
  ],
];

let baseline: Map<string, string>;

describe('RepoChecker: compileRepo again as files change, redoing only what a change affects', () => {
  beforeAll(async () => {
    baseline = new Map((await readConfigRepo(root)).map((f) => [f.path, f.content]));
  });

  it('gives compileRepo’s result after each edit of a sequence', () => {
    const files = new Map(baseline);
    const checker = new RepoChecker(options);
    const reported = new Set<string>();
    for (const [name, edit] of edits) {
      edit(files);
      const list: RepoFile[] = [...files.entries()].map(([path, content]) => ({ path, content }));
      const expected = plain(compileRepo(list, options));
      expect(plain(checker.check(list)), name).toEqual(expected);
      for (const d of expected.diagnostics) reported.add(d.code);
    }
    // The sequence goes through the kinds of diagnostic each phase of the compiler reports.
    for (const code of [
      'mtr:syntax:unexpected-token',
      'mtr:ref:unknown',
      'mtr:repo:duplicate-name',
      'mtr:agent:cycle',
      'mtr:json:invalid',
      'mtr:json:not-found',
      'mtr:repo:unknown-folder',
    ]) {
      expect(reported, code).toContain(code);
    }
  });

  it('checks again only the changed file and the files whose @refs name it, directly or through others', () => {
    const files = new Map(baseline);
    const list = () => [...files.entries()].map(([path, content]) => ({ path, content }));
    const checker = new RepoChecker(options);
    checker.check(list());
    expect(checker.checked.length).toBe(files.size - 1); // every .mtr file (the one .json file is not a resource)

    checker.check(list());
    expect(checker.checked).toEqual([]);

    // An agent no interaction names: only its own file.
    files.set('agents/billing-agent.mtr', `${files.get('agents/billing-agent.mtr')}// a comment\n`);
    checker.check(list());
    expect(checker.checked).toEqual([
      'agents/billing-agent.mtr',
      'agents/triage-agent.mtr',
      'interactions/one-shot/triage.mtr',
    ]);

    // The refund connector: its tool, the agents giving the tool and the interactions running those agents.
    files.set(REFUND_CONNECTOR, `${files.get(REFUND_CONNECTOR)}// a comment\n`);
    checker.check(list());
    expect(checker.checked).toContain(REFUND_CONNECTOR);
    expect(checker.checked).toContain(REFUND_TOOL);
    expect(checker.checked).toContain('agents/support-agent.mtr');
    expect(checker.checked).not.toContain('connectors/open-api/open-meteo-forecast.mtr');
    expect(checker.checked.length).toBeLessThan(files.size / 2);

    // A .json file: the files whose @json load it.
    files.set(SCHEMA, '{ "type": "object" }');
    checker.check(list());
    expect(checker.checked).toEqual(['interactions/one-shot/check-refund.mtr']);
    expect(checker.jsonPaths).toEqual(new Set([SCHEMA]));
  });
});
