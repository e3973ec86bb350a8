import { describe, expect, it } from 'vitest';
import { compile, where } from './helpers.js';

describe('JSON Schema errors of a connector', () => {
  it('reports every wrong value of a schema, each at its place, once', () => {
    const repo = compile({
      'connectors/open-api/c.mtr': `method = "POST"
url = "https://api.example.com/x"
description = "d"
schema.request = {
  type = "object"
  properties = {
    amount = { type = "money" }
    count = { minimum = "one" }
    ref = { "$ref" = "#/definitions/nope" }
    code = { type = "string" pattern = "([" }
  }
  required = "amount"
}
schema.response = { type = "objekt" }
`,
    });
    expect(where(repo.diagnostics)).toEqual([
      'connectors/open-api/c.mtr:7:23 mtr:schema:invalid',
      'connectors/open-api/c.mtr:8:25 mtr:schema:invalid',
      'connectors/open-api/c.mtr:9:22 mtr:schema:invalid',
      'connectors/open-api/c.mtr:10:40 mtr:schema:invalid',
      'connectors/open-api/c.mtr:12:14 mtr:schema:invalid',
      'connectors/open-api/c.mtr:14:28 mtr:schema:invalid',
    ]);
    expect(repo.diagnostics.map((d) => d.message)).toEqual([
      expect.stringContaining('properties/amount/type must be equal to one of the allowed values'),
      expect.stringContaining('properties/count/minimum must be number'),
      expect.stringContaining('$ref #/definitions/nope does not resolve'),
      expect.stringContaining('pattern "([" is not a valid regular expression'),
      expect.stringContaining('required must be array'),
      expect.stringContaining('type must be equal to one of the allowed values'),
    ]);
  });

  it('checks a schema declaring 2020-12 against the 2020-12 meta-schema, one without $schema as draft-07', () => {
    const connector = (schema: string) => `method = "POST"
url = "https://api.example.com/x"
description = "d"
schema.request = ${schema}
`;
    const modern = compile({
      'connectors/open-api/c.mtr': connector(`{
  "$schema" = "https://json-schema.org/draft/2020-12/schema"
  type = "object"
  "$defs" = { id = { type = "integer" } }
  properties = { id = { "$ref" = "#/$defs/id" } pair = { type = "array" prefixItems = [{ type = "string" }] } }
}`),
    });
    expect(modern.diagnostics).toEqual([]);
    // The same wrong prefixItems: refused under 2020-12, an unknown keyword (strict mode off) under draft-07.
    const wrongPrefix = `type = "array" prefixItems = { type = "string" }`;
    const refused = compile({
      'connectors/open-api/c.mtr': connector(
        `{ "$schema" = "https://json-schema.org/draft/2020-12/schema" ${wrongPrefix} }`,
      ),
    });
    expect(refused.diagnostics.map((d) => d.message)).toEqual([expect.stringContaining('prefixItems must be array')]);
    expect(compile({ 'connectors/open-api/c.mtr': connector(`{ ${wrongPrefix} }`) }).diagnostics).toEqual([]);
    const other = compile({
      'connectors/open-api/c.mtr': connector(
        `{ "$schema" = "http://json-schema.org/draft-04/schema#" type = "object" }`,
      ),
    });
    expect(where(other.diagnostics)).toEqual(['connectors/open-api/c.mtr:4:32 mtr:schema:invalid']);
    expect(other.diagnostics[0]?.message).toContain('is not supported: schemas are JSON Schema draft-07 or 2020-12');
  });
});
