#!/usr/bin/env node
// The `mt` executable: a thin launcher for the bundle of the compiled CLI in ../dist/bundle (built by `npm run build`
// after `tsc -b`, scripts/bundle.js): a few files to load instead of ~120-1,450 ES modules (issue #22).

// The Node.js check comes first, before any import an older Node.js lacks (a static import of `enableCompileCache`
// fails on Node.js 20 with a SyntaxError before any line here runs, issue #45): one line naming the version and
// what to do, exit 1. Kept equal to `engines` in ../package.json (test/node-version.test.ts compares them).
const REQUIRED = [22, 19];
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < REQUIRED[0] || (major === REQUIRED[0] && minor < REQUIRED[1])) {
  process.stderr.write(
    `mt: needs Node.js ${REQUIRED.join('.')} or newer (24 LTS), this is ${process.version}: run \`source <your clone>/scripts/node.sh\` in this terminal (Linux x64), or install Node.js 24 from https://nodejs.org\n`,
  );
  process.exit(1);
}

// Node's on-disk compile cache (NODE_COMPILE_CACHE, default a folder under the OS's temp dir): every command and
// `mt serve` start would otherwise compile the same bundle's chunks again. Enabled before the imports below, so
// they all use it; NODE_DISABLE_COMPILE_CACHE=1 turns it off. A folder it cannot write only costs the speed-up: the
// call reports that in its result instead of throwing, and the try is for a Node.js that throws anyway.
try {
  const { enableCompileCache } = await import('node:module');
  enableCompileCache?.();
} catch {}
// A clone built with `tsc -b` alone has dist/ but not the bundle: say so, rather than a module-not-found stack.
async function load(path) {
  try {
    return await import(path);
  } catch (error) {
    const { existsSync } = await import('node:fs');
    if (existsSync(new URL(path, import.meta.url))) throw error;
    process.stderr.write(`mt: ${new URL(path, import.meta.url).pathname} is missing: run \`npm run build\`\n`);
    process.exit(1);
  }
}
const [, , command, ...rest] = process.argv;
if (command === 'lsp' && rest.every((arg) => arg === '--stdio')) {
  // The language server starts with every editor window and its first diagnostics wait for it: it loads only
  // its own modules, not every command's (`mt lsp --help` and the like still go through the CLI below).
  const { startStdioServer } = await load('../dist/bundle/lsp/server.js');
  startStdioServer();
} else {
  // The bundle's main.js loads only what the command needs (`mt import` its own command, others the whole program):
  // each of dist/main.js's `await import(...)` is a chunk of its own.
  const { main } = await load('../dist/bundle/main.js');
  await main(process.argv);
}
