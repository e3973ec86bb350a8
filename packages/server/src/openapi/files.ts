/**
 * Publishes the file routes as OpenAPI can say them: fastify's wildcard (`/files/*`, a parameter named `*`)
 * becomes `{path}` (what a file GET answers and a file PUT takes, the bytes in any media type, is declared at
 * their routes).
 */
export function publishFileRoutes(document: unknown): void {
  const doc = document as { paths?: Record<string, Record<string, Record<string, unknown>>> };
  const paths = doc.paths ?? {};
  for (const [key, item] of Object.entries(paths)) {
    if (!key.endsWith('/{*}')) continue;
    for (const operation of Object.values(item)) {
      const parameters = (operation.parameters ?? []) as { name: string }[];
      for (const parameter of parameters) if (parameter.name === '*') parameter.name = 'path';
    }
    delete paths[key];
    paths[`${key.slice(0, -'{*}'.length)}{path}`] = item;
  }
}
