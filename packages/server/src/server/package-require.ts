import { createRequire } from 'node:module';

/**
 * A `require` that resolves from @maitento/server's own folder, for the files and packages it finds at run time
 * (htmx's dist/, fastify's serializer). Found through the package's name, not `import.meta.url`: the `mt` executable
 * runs a bundle of this code (packages/cli/dist/bundle), whose address is the CLI's, not this package's. From
 * src/ or dist/ the name resolves to the package itself, from the CLI's bundle to the CLI's dependency.
 */
export const serverRequire = createRequire(createRequire(import.meta.url).resolve('@maitento/server/package.json'));
