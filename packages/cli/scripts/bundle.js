// Bundles the compiled CLI (dist/, built by `tsc -b`) into dist/bundle/ with esbuild: the `mt` executable
// (bin/mt.js) loads a few files instead of ~120-1,450 separate ES modules, whose per-module work in Node's ESM
// loader (resolve, realpath, read, link) is most of what a command's or `mt serve`'s start costs (issue #22,
// docs/decisions/0046-the-mt-executable-runs-a-bundle-of-the-compiled.md).
//
// - Entry points: dist/main.js (every command) and dist/lsp/server.js (`mt lsp --stdio`, which loads nothing else).
// - `--splitting`: every `await import(...)` stays a chunk of its own loaded on first use (a command's own program,
//   `mt serve`'s server, the AI SDK, the MCP SDK, the readers, OpenTelemetry's exporters).
// - External (left to Node.js, from node_modules): packages that read files beside their own modules at run time
//   (PGlite's wasm and data files, unpdf's pdf.js build), and optional native modules nobody installs.
// - Files a package reads from its own folder (store's sql/, htmx's dist/) are found through the package's name,
//   not `import.meta.url`, which in a bundle is the chunk's address (store's migrate.ts, server's
//   src/internal/package-require.ts).
// - dist/bundle/meta.json (esbuild's metafile, not packed) says which modules went into which chunk: the tests that
//   check what a command loads read it.
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const cli = fileURLToPath(new URL('../', import.meta.url));
const outdir = `${cli}dist/bundle`;

export const EXTERNAL = ['@electric-sql/pglite', 'unpdf', 'pg-native'];

rmSync(outdir, { recursive: true, force: true });
const started = performance.now();
const result = await build({
  absWorkingDir: cli,
  entryPoints: { main: 'dist/main.js', 'lsp/server': 'dist/lsp/server.js' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  outdir,
  chunkNames: 'chunks/[name]-[hash]',
  external: EXTERNAL,
  // CommonJS dependencies (fastify, pg, ...) call `require` for Node's own modules; an ES module has none.
  banner: {
    js: "import { createRequire as __mtCreateRequire } from 'node:module'; const require = __mtCreateRequire(import.meta.url);",
  },
  // Linked source maps, through tsc's maps to src/*.ts (the packages' own files as esbuild found them), without the
  // sources' text (6 MB instead of 19 MB). Node.js reads them only with --enable-source-maps
  // (NODE_OPTIONS=--enable-source-maps mt ...): off by default, as for dist/ before (docs/decisions/0046-the-mt-executable-runs-a-bundle-of-the-compiled.md).
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});
writeFileSync(`${outdir}/meta.json`, JSON.stringify(result.metafile));
const files = Object.keys(result.metafile.outputs).length;
console.error(`bundled the CLI into ${files} files in ${Math.round(performance.now() - started)} ms`);
