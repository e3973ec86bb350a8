#!/usr/bin/env node
// The `mt` executable: a thin launcher for the compiled CLI in ../dist.
const [, , command, ...rest] = process.argv;
if (command === 'lsp' && rest.every((arg) => arg === '--stdio')) {
  // The language server starts with every editor window and its first diagnostics wait for it: it loads only
  // its own modules, not every command's (`mt lsp --help` and the like still go through the CLI below).
  const { startStdioServer } = await import('../dist/lsp/server.js');
  startStdioServer();
} else {
  // dist/main.js loads only what the command needs (`mt import` its own command, others the whole program).
  const { main } = await import('../dist/main.js');
  await main(process.argv);
}
