import * as vscode from 'vscode';
import {
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import { findServer } from './server-path.js';

let client: LanguageClient | undefined;

/** Starts `mt lsp --stdio` for the `.mtr` files of the workspace. */
export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const setting = vscode.workspace.getConfiguration('maitento').get<string>('server.path');
  const found = findServer(folders, setting);
  if (!found) {
    void vscode.window.showErrorMessage(
      'Maitento: no `mt` found to run the language server. Install the CLI in the workspace (npm install @maitento/cli), ' +
        'set "maitento.server.path" to an mt executable, or put mt on the PATH.',
    );
    return;
  }
  const windows = process.platform === 'win32';
  // TransportKind.stdio adds `--stdio` to the arguments: the server runs as `mt lsp --stdio`.
  const serverOptions: ServerOptions = {
    command: found.command,
    args: ['lsp'],
    transport: TransportKind.stdio,
    options: { shell: windows && /\.cmd$/i.test(found.command) },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'maitento' }],
  };
  client = new LanguageClient('maitento', 'Maitento', serverOptions, clientOptions);
  context.subscriptions.push({ dispose: () => void client?.stop() });
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
