import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import { parseVersionArgument } from '../internal/version-toggle.js';
import type { RegisterCommand } from './index.js';

/** `mt connector-get NAME [--version N]`: one stored version of a connector. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('connector-get')
    .description('Show a connector: its latest version (or the one named) and the HTTP call it makes')
    .argument('<name>', 'the connector name')
    .option('--version <n>', 'a version instead of the latest', parseVersionArgument);
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags & { version?: number }) => {
    await withClient(io, flags, async (client) => {
      const connector = await client.connectors.get(name, { version: flags.version });
      if (flags.json) return printJson(io, connector);
      const { resource } = connector;
      const parameters = [
        ...resource.parameters.path.map((p) => `path.${p.name}`),
        ...resource.parameters.query.map((p) => `query.${p.name}`),
        ...(resource.parameters.header ?? []).map((p) => `header.${p.name}`),
      ];
      io.out(
        formatTable(
          ['FIELD', 'VALUE'],
          [
            ['name', connector.name],
            ['version', connector.version],
            ['enabled', connector.enabled],
            ['call', `${resource.method} ${resource.url}`],
            ['auth', resource.auth],
            ['parameters', parameters.join(', ') || null],
            ['body', resource.schema.request === undefined ? 'none' : 'JSON, checked against schema.request'],
            ['created', connector.createdAt],
          ],
        ),
      );
    });
  });
};
