// An operation of the REST API, declared once, at its route: what fastify validates and serialises with (params,
// querystring, body, response) and what /openapi.json says of it (summary, description, success description,
// examples, the codes of its own logic), in @fastify/swagger's `schema` shape plus three facts of ours.
import type { TSchema } from 'typebox';

/**
 * What an operation shows where its schemas' examples are not enough: `body`, its JSON request body (`bodies`, by
 * media type); `ok`, its success answer (`oks`, by media type); `statuses`, the description and example of an
 * answer the route declares with a schema of its own (the health check's 503).
 */
export interface OperationExamples {
  body?: unknown;
  bodies?: Record<string, unknown>;
  ok?: unknown;
  oks?: Record<string, unknown>;
  statuses?: Record<string, { description: string; example: unknown }>;
}

/** What the OpenAPI document says of an operation beyond @fastify/swagger's own keys (openapi/document.ts reads it). */
export interface OperationDoc {
  /** What its success answer is. */
  ok: string;
  /** The description of a 201 of an operation that also answers 200 (created rather than replaced). */
  created?: string;
  /**
   * The codes of its own logic it can answer; the request, key, role, idempotency and database codes every
   * operation of its kind can answer are added by openapi/document.ts.
   */
  errors: readonly string[];
  examples?: OperationExamples;
  /**
   * A request body taken as the bytes sent, not JSON (fastify validates no schema for it): the media types it is
   * published with, each a binary string, and what it is.
   */
  rawBody?: { types: readonly string[]; description?: string };
  /** Parameters the route reads itself, outside its schemas (a header), as OpenAPI parameter objects. */
  parameters?: readonly Record<string, unknown>[];
}

/** One operation, as its route declares it. */
export interface OperationFacts extends OperationDoc {
  operationId: string;
  tags: readonly string[];
  summary: string;
  /** What it does and when. */
  description: string;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** The success answers by status; every 4xx and 5xx is the shared Error schema. */
  response: Record<number, unknown>;
  security?: unknown[];
  consumes?: string[];
  produces?: string[];
}

const DOC = Symbol('maitento.operation-doc');

/**
 * A route's `schema` from its operation's facts: fastify's and @fastify/swagger's keys as they are, every error
 * status answered with the shared Error schema, and the rest of the facts kept (under a symbol, which neither
 * reads) for {@link operationDoc}.
 */
export function operation<const F extends OperationFacts>(facts: F): Omit<F, keyof OperationDoc> {
  const { ok, created, errors, examples, rawBody, parameters, response, ...schema } = facts;
  const doc: OperationDoc = {
    ok,
    errors,
    ...(created === undefined ? {} : { created }),
    ...(examples ? { examples } : {}),
    ...(rawBody ? { rawBody } : {}),
    ...(parameters ? { parameters } : {}),
  };
  return {
    ...schema,
    response: { ...response, '4xx': { $ref: 'Error#' }, '5xx': { $ref: 'Error#' } },
    [DOC]: doc,
  } as unknown as Omit<F, keyof OperationDoc>;
}

/** The facts {@link operation} kept of a route's schema, if it was made with it. */
export function operationDoc(schema: unknown): OperationDoc | undefined {
  return (schema as { [DOC]?: OperationDoc } | undefined)?.[DOC];
}
