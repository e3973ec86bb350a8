import { setOwn } from './build-resources.js';
import { resolveLocalRef } from './json-schema-dialect.js';
import type { Connector, ConnectorParameter, Json, Tool, ToolDefinition } from './resources.js';

/** Fields of a tool that a run's inputs fill for one interaction (`inputs.functions.binding`), by binding type. */
export interface RunBound {
  request: string[];
  query: string[];
  path: string[];
}

type SchemaObject = { [key: string]: Json };

function isObject(value: Json | undefined): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Makes a field that may be missing accept `null` as well, so that it can be listed as required. */
export function nullable(schema: Json): Json {
  if (!isObject(schema)) return schema === true ? true : { anyOf: [schema, { type: 'null' }] };
  const out: SchemaObject = { ...schema };
  if (typeof out.type === 'string') {
    out.type = out.type === 'null' ? 'null' : [out.type, 'null'];
  } else if (Array.isArray(out.type)) {
    if (!out.type.includes('null')) out.type = [...out.type, 'null'];
  } else {
    const { description, ...rest } = out;
    const wrapped: SchemaObject = { anyOf: [rest, { type: 'null' }] };
    if (description !== undefined) wrapped.description = description;
    return wrapped;
  }
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}

function covers(bound: readonly string[], field: string): boolean {
  return bound.includes(field);
}

function boundBelow(bound: readonly string[], field: string): boolean {
  const prefix = `${field}/`;
  return bound.some((b) => b.startsWith(prefix));
}

/**
 * The strict form of an object schema: bound fields removed, every remaining field required, optional ones
 * nullable, `additionalProperties: false`. Returns undefined when nothing is left for the model to fill.
 */
function strictObject(
  schema: SchemaObject,
  bound: readonly string[],
  prefix: string,
  root?: Json,
): SchemaObject | undefined {
  const source = isObject(schema.properties) ? schema.properties : {};
  const wanted = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : []);
  const properties: SchemaObject = {};
  for (const [name, written] of Object.entries(source)) {
    const field = prefix === '' ? name : `${prefix}/${name}`;
    if (covers(bound, field)) continue;
    // A field written as a local `$ref` is shown as the reference, unless a binding fills a field inside it: then
    // it is shown inlined, without the bound field.
    const child = boundBelow(bound, field) ? resolveLocalRef(root, written) : written;
    let strict: Json;
    if (isObject(child) && isObject(child.properties)) {
      const inner = strictObject(child, bound, field, root);
      if (inner === undefined) continue;
      strict = inner;
    } else strict = strictItems(child);
    setOwn(properties, name, wanted.has(name) ? strict : nullable(strict));
  }
  if (Object.keys(properties).length === 0 && (prefix === '' || boundBelow(bound, prefix))) return undefined;
  return { ...schema, type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** Applies the strict form to the object items of an array schema. */
function strictItems(schema: Json): Json {
  if (!isObject(schema) || !isObject(schema.items) || !isObject(schema.items.properties)) return schema;
  return { ...schema, items: strictObject(schema.items, [], '') ?? { ...schema.items, additionalProperties: false } };
}

/** A path parameter is always shown as required: no URL can be built without it, whatever `required` says. */
function parameterSchema(p: ConnectorParameter, kind: 'path' | 'query' | 'header'): Json {
  const schema: SchemaObject = { type: p.type };
  if (p.description !== undefined) schema.description = p.description;
  return p.required || kind === 'path' ? schema : nullable(schema);
}

function withoutDialect(schema: Json | undefined): Json | undefined {
  if (!isObject(schema) || !Object.hasOwn(schema, '$schema')) return schema;
  const { $schema: _, ...rest } = schema;
  return rest;
}

/**
 * The model-facing definition of a tool: its name, its guidance, and a strict JSON Schema of the arguments
 * the model fills, `{ request?: {...body fields...}, additionalInputs?: { "path.x": ..., "query.y": ..., "header.z": ... } }`,
 * leaving out everything a fixed binding or a run-input binding (`runBound`) fills. A tool on an MCP connector
 * whose remote input schema is not known yet (`mt check`) gets `request` as an open object.
 */
export function toolDefinition(tool: Tool, connector: Connector, runBound?: RunBound): ToolDefinition {
  const boundRequest = [...Object.keys(tool.bindings.request), ...(runBound?.request ?? [])];
  const boundQuery = new Set([...Object.keys(tool.bindings.query), ...(runBound?.query ?? [])]);
  const boundPath = new Set([...Object.keys(tool.bindings.path), ...(runBound?.path ?? [])]);
  const properties: SchemaObject = {};

  // The body's `$schema` (draft-07 or 2020-12) said how to check it; inside the one schema the model reads it would be
  // a dialect switch in a subschema, which providers do not take, so it is left out there.
  // The body's `$defs` (where `mt import openapi` writes a schema referred to more than once) move to the root of the
  // definition: its `$ref`s (`#/$defs/X`) are resolved from the root of the one schema the model reads.
  const written = withoutDialect(connector.schema.request);
  const defs = isObject(written) && isObject(written.$defs) ? written.$defs : undefined;
  let body = written;
  if (defs !== undefined && isObject(written)) {
    const { $defs: _, ...rest } = written;
    body = rest;
  }
  if (connector.mcp !== undefined && body === undefined) {
    // Not listed yet (`mt check`): the arguments are some JSON object, known once a deploy reads the schema.
    properties.request = {
      type: 'object',
      description: `The arguments of the MCP tool ${connector.mcp.tool}; their schema is read from the server at deploy`,
    };
  } else if (isObject(body)) {
    if (isObject(body.properties)) {
      const request = strictObject(body, boundRequest, '', written);
      if (request !== undefined) properties.request = request;
    } else if (boundRequest.length === 0) {
      // A body schema without listed fields (free-form or not an object) is shown as written.
      properties.request = body;
    }
  }

  const additional: SchemaObject = {};
  for (const p of connector.parameters.path)
    if (!boundPath.has(p.name)) additional[`path.${p.name}`] = parameterSchema(p, 'path');
  for (const p of connector.parameters.query) {
    if (!boundQuery.has(p.name)) additional[`query.${p.name}`] = parameterSchema(p, 'query');
  }
  for (const p of connector.parameters.header ?? []) additional[`header.${p.name}`] = parameterSchema(p, 'header');
  if (Object.keys(additional).length > 0) {
    properties.additionalInputs = {
      type: 'object',
      properties: additional,
      required: Object.keys(additional),
      additionalProperties: false,
    };
  }
  return {
    name: tool.name,
    description: tool.guidance,
    parameters: {
      type: 'object',
      properties,
      required: Object.keys(properties),
      additionalProperties: false,
      ...(defs !== undefined && properties.request !== undefined ? { $defs: defs } : {}),
    },
  };
}
