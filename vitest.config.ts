import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/sequencer.js';

// Tests import the workspace packages from their TypeScript sources, so a test run
// never depends on a stale build. Processes spawned by tests (the `mt` CLI, the server)
// run the compiled output, which `npm test` builds first.
const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));
// Entry points besides a package's index come from its package.json `exports` ("./x" -> dist/....js), mapped to
// the TypeScript source they are built from (src/....ts).
function subpathAliases(name: string): { find: RegExp; replacement: string }[] {
  const manifest = JSON.parse(readFileSync(`${packagesDir}${name}/package.json`, 'utf8')) as {
    exports?: Record<string, string | { default?: string }>;
  };
  return Object.entries(manifest.exports ?? {})
    .filter(([subpath]) => subpath !== '.' && subpath !== './package.json')
    .map(([subpath, target]) => {
      const file = typeof target === 'string' ? target : (target.default ?? '');
      const escaped = subpath.slice(2).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      return {
        find: new RegExp(`^@maitento/${name}/${escaped}$`),
        replacement: `${packagesDir}${name}/${file.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')}`,
      };
    });
}
const packageNames = readdirSync(packagesDir);
const alias = [
  ...packageNames.flatMap(subpathAliases),
  ...packageNames.map((name) => ({
    find: new RegExp(`^@maitento/${name}$`),
    replacement: `${packagesDir}${name}/src/index.ts`,
  })),
];

// Files of the packages that keep a fresh worker (project `isolated`): the PGlite files (WASM instances of their own;
// store/test/pglite timed out twice under load in a shared worker) and the files asserting sub-second bounds on
// wake-ups and the cache lease (cache-lease's 200 ms settle took 471 ms once in a shared worker at load 7), which
// then run in a process of their own with nothing left behind by an earlier file.
const OWN_WORKER_FILES = [
  'packages/store/test/pglite.test.ts',
  'packages/testkit/src/pglite-template.test.ts',
  'packages/store/test/cache-lease.test.ts',
  'packages/store/test/wakeups.test.ts',
  'packages/server/test/wakeups.test.ts',
  'packages/server/test/caches.test.ts',
  'packages/engine/test/concurrency.test.ts',
  // The console's browser tests: each launches Chromium; in a shared worker, after the files before them, a set-up of
  // theirs hung past its 2 minutes in three CI passes of 7 December (never alone, never in a fresh worker).
  'test/e2e/console/*.test.ts',
];

export default defineConfig({
  resolve: { alias },
  test: {
    // Three projects (docs/decisions/0040-test-files-that-share-a-worker.md and
    // docs/decisions/0044-test-shares-a-worker-the-long-files-first.md). `shared`: the packages' own tests, which
    // import the workspace packages in-process; they run unisolated, each worker evaluating the packages once for
    // all the files it runs instead of once per file (a fresh worker per file cost ~0.9 s and re-importing the
    // packages as much again: the packages' 153 files took 576 s of CPU isolated, 344 s unisolated). A file there
    // puts back what it changes in the process (environment variables, globals, spies) when it ends. `processes`:
    // test/, whose files mostly drive spawned `mt` and `mt serve` processes, unisolated as well (a fork per file cost
    // 0.5-1.0 s of CPU). `isolated`: OWN_WORKER_FILES, each in a fresh worker.
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...OWN_WORKER_FILES],
          isolate: false,
        },
      },
      // Each puts back what it changes (secrets-canary `fetch`, messages `MT_SCRIPTED_MODELS`, quickstart-words its spy).
      {
        extends: true,
        test: {
          name: 'processes',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...OWN_WORKER_FILES],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'isolated', include: OWN_WORKER_FILES, isolate: true } },
    ],
    // One check that PostgreSQL is there (MT_TEST_PG_URL), before any file runs.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The long files first, project by project (test/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    // Two files at a time at least: each file has its own database and servers, and most of a file's time is spent
    // waiting on processes, PostgreSQL and sockets, so on 2 cores two at a time take 737 s where vitest's default (the
    // cores less one: one at a time here) took 1,047 s (docs/performance.md at 3251c0c, "Where the test suite's time goes").
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
