import type { FastifyInstance } from 'fastify';
import { runnableSchemas } from './runnables.js';
import { runSchemas } from './runs.js';

const anyJson = {};
const stringMap = { type: 'object', additionalProperties: true };

const parameter = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    required: { type: 'boolean' },
    type: { type: 'string', enum: ['string', 'number', 'integer', 'boolean'] },
  },
};

/** The schemas several routes share, each added once with its `$id`. */
export const sharedSchemas = [
  {
    $id: 'Error',
    type: 'object',
    description: 'Every error: a message, a stable code, and for a refused deploy its diagnostics',
    properties: {
      error: { type: 'string' },
      code: { type: 'string' },
      diagnostics: { type: 'array', items: { $ref: 'Diagnostic#' } },
    },
    required: ['error', 'code'],
  },
  {
    $id: 'Diagnostic',
    type: 'object',
    properties: {
      code: { type: 'string' },
      severity: { type: 'string', enum: ['error', 'warning'] },
      message: { type: 'string' },
      file: { type: 'string' },
      line: { type: 'integer' },
      column: { type: 'integer' },
      endLine: { type: 'integer' },
      endColumn: { type: 'integer' },
      hint: { type: 'string' },
    },
    required: ['code', 'severity', 'message', 'file', 'line', 'column'],
  },
  {
    $id: 'Connector',
    type: 'object',
    properties: {
      kind: { type: 'string', enum: ['connector'] },
      name: { type: 'string' },
      method: { type: 'string' },
      url: { type: 'string' },
      description: { type: 'string' },
      parameters: {
        type: 'object',
        properties: { path: { type: 'array', items: parameter }, query: { type: 'array', items: parameter } },
      },
      schema: { type: 'object', properties: { request: anyJson, response: anyJson } },
      auth: { type: 'string', enum: ['None', 'Header', 'Maitento'] },
    },
  },
  {
    $id: 'Tool',
    type: 'object',
    properties: {
      kind: { type: 'string', enum: ['tool'] },
      name: { type: 'string' },
      connector: { type: 'string' },
      guidance: { type: 'string' },
      bindings: {
        type: 'object',
        properties: { request: stringMap, query: stringMap, path: stringMap },
      },
      // The secret's name only; its value never leaves the store.
      auth: { type: 'object', properties: { header: { type: 'string' }, secret: { type: 'string' } } },
      requiresApproval: { type: 'boolean' },
    },
  },
  {
    $id: 'ToolDefinition',
    type: 'object',
    description: 'Exactly what a model is sent for the tool',
    properties: {
      name: { type: 'string' },
      description: { type: 'string' },
      parameters: { type: 'object', additionalProperties: true },
    },
  },
  {
    $id: 'DeployPlan',
    type: 'object',
    properties: {
      applied: { type: 'boolean' },
      changes: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            kind: { type: 'string', enum: ['connector', 'tool', 'agent', 'interaction'] },
            name: { type: 'string' },
            action: { type: 'string', enum: ['create', 'update', 'unchanged'] },
            version: { type: 'integer' },
            previousVersion: { type: 'integer' },
            changed: { type: 'array', items: { type: 'string' } },
            breaking: { type: 'array', items: { type: 'string' } },
          },
          required: ['kind', 'name', 'action', 'version', 'breaking'],
        },
      },
    },
    required: ['applied', 'changes'],
  },
  {
    $id: 'VersionState',
    type: 'object',
    properties: { name: { type: 'string' }, version: { type: 'integer' }, enabled: { type: 'boolean' } },
    required: ['name', 'version', 'enabled'],
  },
  {
    $id: 'VersionSummary',
    type: 'object',
    properties: { version: { type: 'integer' }, enabled: { type: 'boolean' }, createdAt: { type: 'string' } },
    required: ['version', 'enabled', 'createdAt'],
  },
  {
    $id: 'Secret',
    type: 'object',
    description: 'A secret by id and name; its value is never returned',
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: 'string' },
      createdAt: { type: 'string' },
      updatedAt: { type: 'string' },
    },
    required: ['id', 'name', 'createdAt', 'updatedAt'],
  },
];

/** Adds {@link sharedSchemas} to `app`. */
export function addSharedSchemas(app: FastifyInstance): void {
  for (const schema of [...sharedSchemas, ...runnableSchemas, ...runSchemas]) app.addSchema(schema);
}

/** A response map: `ok` for the success status, the shared error schema for every 4xx and 5xx. */
export function responses(ok: Record<number, unknown>): Record<string, unknown> {
  return { ...ok, '4xx': { $ref: 'Error#' }, '5xx': { $ref: 'Error#' } };
}

/** The longest resource name a path may carry (a deployed file path is at most 1000 characters). */
export const MAX_NAME_LENGTH = 1000;

// A name is a file name: no control characters (PostgreSQL text cannot even hold NUL).
const name = { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, pattern: '^[^\\u0000-\\u001f]+$' };

/** The `:name` path parameter of resources. */
export const nameParams = {
  type: 'object',
  properties: { name },
  required: ['name'],
};

/** The `:name/versions/:version` path parameters. */
export const versionParams = {
  type: 'object',
  properties: {
    name,
    version: { type: 'integer', minimum: 1, maximum: 2147483647 },
  },
  required: ['name', 'version'],
};

/** The `:id` path parameter of keys and secrets. */
export const idParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
  required: ['id'],
};
