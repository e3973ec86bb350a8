import type { RegisterCommand } from './index.js';

/** `mt lsp [--stdio]`: the language server for `.mtr` files, for editors (VS Code, Neovim, ...). */
export const register: RegisterCommand = (program) => {
  program
    .command('lsp')
    .description('Run the language server for .mtr files on stdin/stdout (for editors)')
    .option('--stdio', 'talk LSP over stdin and stdout (the default and only transport)')
    .addHelpText(
      'after',
      `
Diagnostics come from the same compiler as mt check; completion, hover, go to definition and formatting
(mt fmt's) work across the .mtr files of the workspace folders. See docs/editors.md.

Exit codes: 0 after the client's shutdown and exit, 1 on exit without shutdown.`,
    )
    .action(async () => {
      const { startStdioServer } = await import('../lsp/server.js');
      startStdioServer();
      // The server runs until the client sends exit (or closes stdin); the library ends the process then.
      await new Promise<never>(() => {});
    });
};
