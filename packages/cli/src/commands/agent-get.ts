import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import { parseVersionArgument } from '../internal/version-toggle.js';
import type { RegisterCommand } from './index.js';

/** `mt agent-get NAME [--version N]`: one stored version of an agent. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('agent-get')
    .description('Show an agent: its latest version (or the one named), its model, instructions and tools')
    .argument('<name>', 'the agent name')
    .option('--version <n>', 'a version instead of the latest', parseVersionArgument);
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags & { version?: number }) => {
    await withClient(io, flags, async (client) => {
      const agent = await client.agents.get(name, { version: flags.version });
      if (flags.json) return printJson(io, agent);
      const summary = formatTable(
        ['FIELD', 'VALUE'],
        [
          ['name', agent.name],
          ['version', agent.version],
          ['enabled', agent.enabled],
          ['model', agent.model],
          ['summary', agent.summary],
          ['tools', agent.tools.map((t) => `${t.name} (version ${t.version})`).join(', ') || null],
          ['created', agent.createdAt],
        ],
      );
      io.out(`${summary}\n\nInstructions:\n${agent.instructions}`);
    });
  });
};
