/**
 * Publishes the file routes as OpenAPI can say them: fastify's wildcard (`/files/*`, a parameter named `*`)
 * becomes `{path}`, a file PUT takes any media type as the file's bytes, and a file GET answers with them.
 */
export function publishFileRoutes(document: unknown): void {
  const doc = document as { paths?: Record<string, Record<string, Record<string, unknown>>> };
  const paths = doc.paths ?? {};
  for (const [key, item] of Object.entries(paths)) {
    if (!key.endsWith('/{*}')) continue;
    for (const operation of Object.values(item)) {
      const parameters = (operation.parameters ?? []) as { name: string }[];
      for (const parameter of parameters) if (parameter.name === '*') parameter.name = 'path';
      if (operation.operationId === 'putFile') {
        operation.requestBody = {
          required: true,
          description: 'The file, as it is stored (its Content-Type is stored with it)',
          content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
        };
      }
      const responses = operation.responses as Record<string, { content?: Record<string, unknown> }>;
      if (operation.operationId === 'getFile' && responses['200']?.content) {
        responses['200'].content = { '*/*': { schema: { type: 'string', format: 'binary' } } };
      }
    }
    delete paths[key];
    paths[`${key.slice(0, -'{*}'.length)}{path}`] = item;
  }
}
