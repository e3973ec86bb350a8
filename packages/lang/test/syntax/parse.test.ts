import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ArrayValue, Assignment, DirectiveValue, ObjectValue, StringValue, ValueNode } from '../../src/index.js';
import { parseMtr } from '../../src/index.js';

const seed = (path: string) => readFileSync(new URL(`../fixtures/seed/${path}`, import.meta.url), 'utf8');

const keyOf = (a: Assignment) =>
  a.key.segments.map((s) => (s.qualifier === undefined ? s.name : `${s.qualifier}:${s.name}`)).join('.');

// A plain-data view of a value, to compare without spans.
function plain(value: ValueNode): unknown {
  switch (value.kind) {
    case 'String':
    case 'Number':
    case 'Boolean':
      return value.value;
    case 'Null':
      return null;
    case 'Array':
      return value.elements.map(plain);
    case 'Object':
      return Object.fromEntries(value.entries.map((e) => [keyOf(e), plain(e.value)]));
    case 'Directive':
      return { [`@${value.name}`]: value.args.map((a) => a.value) };
  }
}

function parseOk(text: string) {
  const result = parseMtr(text, 'test.mtr');
  expect(result.diagnostics).toEqual([]);
  return result.ast;
}

function only(text: string): Assignment {
  const ast = parseOk(text);
  expect(ast.assignments).toHaveLength(1);
  return ast.assignments[0];
}

describe('parseMtr on the seed examples', () => {
  it('parses the Open-Meteo connector with its comment and parameter list', () => {
    const ast = parseOk(seed('connectors/open-api/open-meteo-forecast.mtr'));
    expect(ast.assignments.map(keyOf)).toEqual(['method', 'url', 'description', 'parameters.query']);
    expect(plain(ast.assignments[0].value)).toBe('GET');
    expect(plain(ast.assignments[1].value)).toBe('https://api.open-meteo.com/v1/forecast');
    const query = ast.assignments[3].value as ArrayValue;
    expect(query.elements).toHaveLength(4);
    expect(plain(query.elements[1])).toEqual({
      name: 'longitude',
      description: 'Longitude in decimal degrees, for example -0.1276',
      type: 'number',
    });
    expect(ast.comments).toHaveLength(1);
    expect(ast.comments[0].text).toBe(
      " The connector: the HTTP call itself. Open-Meteo's forecast API is free and needs no key.",
    );
    expect(ast.comments[0].span.start).toEqual({ offset: 0, line: 1, column: 1 });
  });

  it('parses the current-weather tool: a @ref directive and a kind:name binding', () => {
    const ast = parseOk(seed('external-operations/open-api/current-weather.mtr'));
    expect(ast.assignments.map(keyOf)).toEqual(['connector', 'bindings.query:current', 'guidance']);
    const connector = ast.assignments[0].value as DirectiveValue;
    expect(connector.kind).toBe('Directive');
    expect(connector.name).toBe('ref');
    expect(connector.args.map((a) => a.value)).toEqual(['open-meteo-forecast']);
    const binding = ast.assignments[1].key.segments[1];
    expect(binding).toMatchObject({ qualifier: 'query', name: 'current', quoted: false });
    expect(plain(ast.assignments[1].value)).toBe('temperature_2m,wind_speed_10m,weather_code');
    expect(ast.comments.map((c) => c.span.start.line)).toEqual([1, 2, 4]);
  });

  it('parses the ask-handbook interaction: nested object, placeholders as text, bindings', () => {
    const ast = parseOk(seed('interactions/one-shot/ask-handbook.mtr'));
    expect(ast.assignments.map(keyOf)).toEqual([
      'agent',
      'task',
      'inputs.prompts',
      'functions.openApi',
      'inputs.functions.binding',
    ]);
    expect(plain(ast.assignments[0].value)).toEqual({
      name: 'HandbookAssistant',
      agent: { '@ref': ['handbook-assistant'] },
    });
    expect(plain(ast.assignments[1].value)).toBe('An employee asks: %%question%%');
    expect(plain(ast.assignments[4].value)).toEqual([
      {
        function: { '@ref': ['search-handbook'] },
        name: 'partitionId',
        target: 'partitionId',
        description: 'The knowledge base to search',
        required: true,
        type: 'request',
      },
    ]);
  });

  it('parses the support-any-shop interaction with its auth input', () => {
    const ast = parseOk(seed('interactions/one-shot/support-any-shop.mtr'));
    expect(ast.assignments.map(keyOf)).toEqual(['agent', 'task', 'inputs.prompts', 'inputs.functions.auth']);
    const auth = (ast.assignments[3].value as ArrayValue).elements[0] as ObjectValue;
    expect(auth.entries.map(keyOf)).toEqual(['name', 'description', 'function', 'agent', 'header', 'required']);
    expect(ast.comments).toHaveLength(3);
  });

  it('parses the one-line agent functions example', () => {
    const a = only(seed('agents/weather-agent-functions.mtr'));
    expect(keyOf(a)).toBe('functions');
    expect(plain(a.value)).toEqual([{ ref: { '@ref': ['current-weather'] } }]);
  });
});

describe('parseMtr values', () => {
  it('reads strings with JSON escapes, including \\uXXXX and surrogate pairs', () => {
    const value = only('s = "a\\"b\\\\c\\/d\\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00"').value as StringValue;
    expect(value.value).toBe('a"b\\c/d\b\f\n\r\t é 😀');
    expect(value.raw).toBe('"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00"');
  });

  it('reads numbers in JSON syntax, negative ones too, keeping the raw text', () => {
    const ast = parseOk('a = 0\nb = -12\nc = 3.25\nd = -1.5e3\ne = 2E-2\n');
    expect(ast.assignments.map((a) => plain(a.value))).toEqual([0, -12, 3.25, -1500, 0.02]);
    expect(ast.assignments.map((a) => (a.value.kind === 'Number' ? a.value.raw : ''))).toEqual([
      '0',
      '-12',
      '3.25',
      '-1.5e3',
      '2E-2',
    ]);
  });

  it('reads true, false and null', () => {
    const ast = parseOk('a = true\nb = false\nc = null');
    expect(ast.assignments.map((a) => a.value.kind)).toEqual(['Boolean', 'Boolean', 'Null']);
    expect(ast.assignments.map((a) => plain(a.value))).toEqual([true, false, null]);
  });

  it('reads arrays with a trailing comma, across lines, empty, and nested', () => {
    expect(plain(only('a = [1, 2, 3,]').value)).toEqual([1, 2, 3]);
    expect(plain(only('a = [\n  "x",\n  "y",\n]').value)).toEqual(['x', 'y']);
    expect(plain(only('a = []').value)).toEqual([]);
    expect(plain(only('a = [[1], [[]], {}]').value)).toEqual([[1], [[]], {}]);
  });

  it('reads objects on one line and over several, with dotted keys inside', () => {
    expect(plain(only('auth = { header = "X-Api-Key" secret = @ref("my-secret") }').value)).toEqual({
      header: 'X-Api-Key',
      secret: { '@ref': ['my-secret'] },
    });
    expect(plain(only('o = {\n  a.b = 1\n\n  c = { d = [true] }\n}').value)).toEqual({ 'a.b': 1, c: { d: [true] } });
    expect(plain(only('o = {}').value)).toEqual({});
  });

  it('reads directives with any name and several string arguments', () => {
    const value = only('x = @json("schemas/order.json")').value as DirectiveValue;
    expect(value).toMatchObject({ kind: 'Directive', name: 'json' });
    expect(value.args.map((a) => a.value)).toEqual(['schemas/order.json']);
    const many = only('x = @custom-thing("a", "b",)').value as DirectiveValue;
    expect(many.name).toBe('custom-thing');
    expect(many.args.map((a) => a.value)).toEqual(['a', 'b']);
  });

  it('keeps %%placeholders%% and {path} parameters as plain text in strings', () => {
    expect(plain(only('url = "https://x.example/orders/{orderId}?q=%%q%%"').value)).toBe(
      'https://x.example/orders/{orderId}?q=%%q%%',
    );
  });
});

describe('parseMtr keys', () => {
  it('reads quoted key segments, unescaped, and marks them quoted', () => {
    const a = only('properties."x-request-id" = { type = "string" }');
    expect(a.key.segments.map((s) => [s.name, s.quoted])).toEqual([
      ['properties', false],
      ['x-request-id', true],
    ]);
    expect(only('"a\\"b" = 1').key.segments[0].name).toBe('a"b');
  });

  it('reads identifiers with - and _ after the first letter, and keywords as segments', () => {
    expect(keyOf(only('x-request-id = 1'))).toBe('x-request-id');
    expect(keyOf(only('_private.temperature_2m = 1'))).toBe('_private.temperature_2m');
    expect(keyOf(only('properties.null.true = 1'))).toBe('properties.null.true');
  });

  it('reads kind:name segments whose name holds / and -, or is quoted', () => {
    const a = only('bindings.request:address/city-name = "Paris"');
    expect(a.key.segments[1]).toMatchObject({ qualifier: 'request', name: 'address/city-name', quoted: false });
    const b = only('bindings.path:"order id" = "A-1"');
    expect(b.key.segments[1]).toMatchObject({ qualifier: 'path', name: 'order id', quoted: true });
  });

  it('refuses a / in a segment that is not the name of kind:name', () => {
    const { diagnostics } = parseMtr('address/city = 1', 'k.mtr');
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: 'mtr:syntax:invalid-key', line: 1, column: 1, endColumn: 13 });
  });
});

describe('parseMtr comments and layout', () => {
  it('keeps own-line and trailing comments with their text and place', () => {
    const ast = parseOk('// head\na = 1 // tail\n  // inner\nb = 2');
    expect(ast.comments.map((c) => [c.text, c.span.start.line, c.span.start.column])).toEqual([
      [' head', 1, 1],
      [' tail', 2, 7],
      [' inner', 3, 3],
    ]);
  });

  it('accepts a BOM, CR-only and CRLF line breaks, and counts lines across all of them', () => {
    const ast = parseOk('\uFEFFa = 1\rb = 2\r\nc = 3\nd = 4');
    expect(ast.assignments.map((a) => [keyOf(a), a.span.start.line, a.span.start.column])).toEqual([
      ['a', 1, 2],
      ['b', 2, 1],
      ['c', 3, 1],
      ['d', 4, 1],
    ]);
  });

  it('accepts several assignments on one line', () => {
    expect(parseOk('a = 1 b = "x"').assignments.map(keyOf)).toEqual(['a', 'b']);
  });

  it('accepts an empty file and a file of comments only', () => {
    expect(parseOk('').assignments).toEqual([]);
    expect(parseOk('// only a comment\n\n').comments).toHaveLength(1);
  });
});

describe('parseMtr spans', () => {
  it('gives 1-based lines and columns and exclusive ends for keys, values and assignments', () => {
    const ast = parseOk('x = 1\n  name.first = "Ada" ');
    const a = ast.assignments[1];
    expect(a.key.span).toEqual({
      start: { offset: 8, line: 2, column: 3 },
      end: { offset: 18, line: 2, column: 13 },
    });
    expect(a.key.segments[1].span.start.column).toBe(8);
    expect(a.value.span).toEqual({
      start: { offset: 21, line: 2, column: 16 },
      end: { offset: 26, line: 2, column: 21 },
    });
    expect(a.span.start).toEqual(a.key.span.start);
    expect(a.span.end).toEqual(a.value.span.end);
  });

  it('spans an array or object from its opening to its closing bracket, across lines', () => {
    const ast = parseOk('list = [\n  { a = 1 },\n]');
    const list = ast.assignments[0].value as ArrayValue;
    expect(list.span.start).toEqual({ offset: 7, line: 1, column: 8 });
    expect(list.span.end).toEqual({ offset: 23, line: 3, column: 2 });
    const element = list.elements[0] as ObjectValue;
    expect(element.span.start).toMatchObject({ line: 2, column: 3 });
    expect(element.span.end).toMatchObject({ line: 2, column: 12 });
  });

  it('spans the whole file', () => {
    const ast = parseOk('a = 1\nb = 2\n');
    expect(ast.span.end).toEqual({ offset: 12, line: 3, column: 1 });
  });
});

describe('docs/mtr-language.md syntax section', () => {
  it('has a first example that parses without a diagnostic', () => {
    const doc = readFileSync(new URL('../../../../docs/mtr-language.md', import.meta.url), 'utf8');
    const syntax = doc.slice(doc.indexOf('## Syntax'));
    const example = /```\n([\s\S]*?)```/.exec(syntax)?.[1] ?? '';
    expect(example).toContain('bindings.query:current');
    expect(parseMtr(example, 'doc.mtr').diagnostics).toEqual([]);
  });
});
