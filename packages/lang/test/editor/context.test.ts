import { describe, expect, it } from 'vitest';
import { describeProperty, editorContext, fileShape, refKindAt, shapeAt } from '../../src/index.js';

/** The context at the `|` of `text` (the `|` removed). */
function at(text: string) {
  const offset = text.indexOf('|');
  return editorContext(text.slice(0, offset) + text.slice(offset + 1), offset);
}

describe('editorContext', () => {
  it('finds a key place at the top level with the keys the file has, also after the place', () => {
    expect(at('method = "GET"\nde|\nurl = "u"\n')).toEqual({
      at: 'key',
      path: [],
      present: ['method', 'url'],
      word: { text: 'de', start: 15, end: 17 },
    });
  });

  it('follows dotted keys, arrays and objects, also in a file with syntax errors', () => {
    expect(at('parameters.query = [ { name = "x" | } ]')).toMatchObject({
      at: 'key',
      path: ['parameters', 'query', 0],
      present: ['name'],
    });
    expect(at('agent = { name = "S" | }\ntask = "t')).toMatchObject({ at: 'key', path: ['agent'], present: ['name'] });
    expect(at('parameters.|')).toMatchObject({ at: 'key', path: ['parameters'] });
  });

  it('finds @ref arguments with the property they are for', () => {
    expect(at('functions = [ { ref = @ref("cur|") } ]')).toEqual({
      at: 'ref',
      path: ['functions', 0, 'ref'],
      word: { text: 'cur', start: 28, end: 31 },
    });
    expect(at('connector = @ref(|')).toEqual({ at: 'ref', path: ['connector'] });
    expect(at('schema.request = @json("a|.json")')).toEqual({ at: 'other' });
  });

  it('tells a value place, and nothing in a comment', () => {
    expect(at('connector = |')).toEqual({ at: 'value', path: ['connector'] });
    expect(at('// a comment |\n')).toEqual({ at: 'other' });
  });
});

describe('shapes for editors', () => {
  it('gives the shape of a file from its path, the kind a @ref takes and the docs of a property', () => {
    const agent = fileShape('agents/support.mtr');
    expect(agent && refKindAt(agent, ['functions', 3, 'ref'])).toBe('tool');
    const mcp = fileShape('connectors/mcp/search.mtr');
    expect(mcp && shapeAt(mcp, ['tool'])?.property?.required).toBe(true);
    expect(fileShape('docs/x.mtr')).toBeUndefined();
    // A conversation takes maxIdle, as the compiler reads it; a one-shot interaction does not.
    const chat = fileShape('interactions/conversation/support-chat.mtr');
    expect(chat && shapeAt(chat, ['maxIdle'])?.property?.doc).toMatch(/waits for a message/);
    const once = fileShape('interactions/one-shot/weather.mtr');
    expect(once && shapeAt(once, ['maxIdle'])).toBeUndefined();
    const tool = fileShape('external-operations/open-api/get-order.mtr');
    const connector = tool && shapeAt(tool, ['connector'])?.property;
    expect(connector && describeProperty('connector', connector)).toBe(
      '**connector** (required): @ref("<connector>")\n\nThe connector the tool calls.',
    );
  });
});
