import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import the workspace packages from their TypeScript sources, so a test run
// never depends on a stale build. Processes spawned by tests (the `mt` CLI, the server)
// run the compiled output, which `npm test` builds first.
const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));
const alias = [
  // Entry points besides a package's index (its package.json `exports`).
  { find: /^@maitento\/lang\/json-schema$/, replacement: `${packagesDir}lang/src/config/json-schema-dialect.ts` },
  { find: /^@maitento\/egress\/static$/, replacement: `${packagesDir}egress/src/static.ts` },
  ...readdirSync(packagesDir).map((name) => ({
    find: new RegExp(`^@maitento/${name}$`),
    replacement: `${packagesDir}${name}/src/index.ts`,
  })),
];

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // One check that PostgreSQL is there (MT_TEST_PG_URL), before any file runs.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
