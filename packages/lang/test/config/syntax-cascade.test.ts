import { parseMtr } from '@maitento/lang';
import { describe, expect, it } from 'vitest';
import { compile, ordersConnector, where } from './helpers.js';

const connector = (text: string) => compile({ 'connectors/open-api/c.mtr': text });

describe('a property whose value failed to parse', () => {
  it('gives only its syntax error, not also "a connector needs method"', () => {
    const repo = connector('method = GET\nurl = "https://api.example.com/x"\ndescription = "d"\n');
    expect(where(repo.diagnostics)).toEqual(['connectors/open-api/c.mtr:1:10 mtr:syntax:unexpected-token']);
    expect(repo.ok).toBe(false);
  });

  it('is not called missing when its value is absent before the next line or the end of the file', () => {
    expect(where(connector('method = "GET"\nurl = \ndescription = "d"\n').diagnostics)).toEqual([
      'connectors/open-api/c.mtr:2:6 mtr:syntax:unexpected-token',
    ]);
    expect(where(connector('method = "GET"\ndescription = "d"\nurl =').diagnostics)).toEqual([
      'connectors/open-api/c.mtr:3:6 mtr:syntax:unexpected-token',
    ]);
    expect(where(connector('method = "GET"\ndescription = "d"\nurl = [ 1,\n').diagnostics)).toEqual([
      'connectors/open-api/c.mtr:3:11 mtr:syntax:unexpected-token',
    ]);
  });

  it('is not called missing inside an object of an array (a parameter with name = x)', () => {
    const repo = connector(ordersConnector.replace('[ { name = "orderId" } ]', '[ { name = orderId } ]'));
    expect(where(repo.diagnostics)).toEqual(['connectors/open-api/c.mtr:4:30 mtr:syntax:unexpected-token']);
  });

  it('is not called missing when written with a dotted key', () => {
    const repo = compile({
      'interactions/one-shot/i.mtr': 'agent.name = "S"\nagent.agent = support\ntask = "t"\n',
      'agents/support.mtr': 'model = "openai:gpt-4o-mini"\ninstructions = "i"\n',
    });
    expect(where(repo.diagnostics)).toEqual(['interactions/one-shot/i.mtr:2:15 mtr:syntax:unexpected-token']);
  });

  it('still reports a required property that is not written at all', () => {
    const repo = connector('method = GET\ndescription = "d"\n');
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/c.mtr:1:1 mtr:property:required',
      'connectors/open-api/c.mtr:1:10 mtr:syntax:unexpected-token',
    ]);
    expect(repo.diagnostics[0].message).toBe('a connector needs url');
  });

  it('gives only its syntax error when a directive argument is a bare word (@ref, @json, an unknown one)', () => {
    const tool = (text: string) =>
      where(
        compile({ 'external-operations/open-api/t.mtr': text, 'connectors/open-api/c.mtr': ordersConnector })
          .diagnostics,
      );
    expect(tool('connector = @ref(c)\nguidance = "g"\n')).toEqual([
      'external-operations/open-api/t.mtr:1:18 mtr:syntax:unexpected-token',
    ]);
    expect(tool('connector = @ref("c", d)\nguidance = "g"\n')).toEqual([
      'external-operations/open-api/t.mtr:1:23 mtr:syntax:unexpected-token',
    ]);
    expect(tool('connector = @ref("c")\nguidance = "g"\nauth = { header = "X" secret = @ref(k) }\n')).toEqual([
      'external-operations/open-api/t.mtr:3:37 mtr:syntax:unexpected-token',
    ]);
    expect(tool('connector = @secret(c)\nguidance = "g"\n')).toEqual([
      'external-operations/open-api/t.mtr:1:21 mtr:syntax:unexpected-token',
    ]);
    const json = connector(
      'method = "POST"\nurl = "https://api.example.com/x"\ndescription = "d"\nschema.request = @json(x)\n',
    );
    expect(where(json.diagnostics)).toEqual(['connectors/open-api/c.mtr:4:24 mtr:syntax:unexpected-token']);
  });

  it('lists the key of a directive whose arguments did not parse as unparsed', () => {
    const { ast } = parseMtr('connector = @ref(c)\nguidance = "g"\n', 't.mtr');
    expect(ast.assignments.map((a) => a.key.segments[0].name)).toEqual(['guidance']);
    expect(ast.unparsed?.map((k) => k.segments[0].name)).toContain('connector');
  });

  it('is listed by the parser as unparsed, at the top level and in objects', () => {
    const { ast } = parseMtr('method = GET\nauth = { header = X secret = "s" }\n', 'c.mtr');
    expect(ast.unparsed?.map((k) => k.segments.map((s) => s.name).join('.'))).toEqual(['method']);
    const auth = ast.assignments.find((a) => a.key.segments[0].name === 'auth');
    expect(auth?.value.kind === 'Object' && auth.value.unparsed?.map((k) => k.segments[0].name)).toEqual(['header']);
    expect(parseMtr('method = "GET"\n', 'c.mtr').ast.unparsed).toBeUndefined();
  });
});
