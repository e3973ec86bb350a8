/**
 * The operations whose request body is a file sent as it is, with the content types they take: fastify validates
 * no schema for them (a Buffer is no JSON value), so the OpenAPI document gets their request body here.
 */
export const RAW_BODIES: Record<string, readonly string[]> = {
  addKnowledgeDocument: ['text/plain', 'text/markdown', 'text/html', 'application/pdf'],
};

/** Adds the request body of each {@link RAW_BODIES} operation to an OpenAPI document: the file, in any of its types. */
export function markRawBodies(document: unknown): void {
  const paths = (document as { paths?: Record<string, Record<string, unknown>> }).paths ?? {};
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const op = operation as { operationId?: string; requestBody?: unknown };
      const types = op.operationId === undefined ? undefined : RAW_BODIES[op.operationId];
      if (types) {
        op.requestBody = {
          required: true,
          content: Object.fromEntries(types.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
        };
      }
    }
  }
}
