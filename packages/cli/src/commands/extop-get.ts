import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import { parseVersionArgument } from '../internal/version-toggle.js';
import type { RegisterCommand } from './index.js';

/** `mt extop-get NAME [--version N]`: one stored version of a tool and the model-facing definition a model is sent. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('extop-get')
    .description('Show a tool (extop): its latest version (or the one named), its connector and what the model sees')
    .argument('<name>', 'the tool name')
    .option('--version <n>', 'a version instead of the latest', parseVersionArgument);
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags & { version?: number }) => {
    await withClient(io, flags, async (client) => {
      const extop = await client.extops.get(name, { version: flags.version });
      if (flags.json) return printJson(io, extop);
      const summary = formatTable(
        ['FIELD', 'VALUE'],
        [
          ['name', extop.name],
          ['version', extop.version],
          ['enabled', extop.enabled],
          ['connector', `${extop.connector.name} (version ${extop.connector.version})`],
          ['approval', extop.resource?.requiresApproval ? 'required before each call' : 'not required'],
          ['created', extop.createdAt],
        ],
      );
      io.out(`${summary}\n\nWhat the model sees:\n${JSON.stringify(extop.definition, null, 2)}`);
    });
  });
};
