import type { InteractionInput } from '@maitento/sdk';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import { parseVersionArgument } from '../internal/version-toggle.js';
import type { RegisterCommand } from './index.js';

function inputUse(input: InteractionInput): string {
  if (input.kind === 'prompt') return `fills %%${input.name}%% in the task`;
  const agent = input.agent ? ` of ${input.agent}` : '';
  if (input.kind === 'binding') return `${input.type}.${input.target} of ${input.function}${agent}`;
  return `secret id sent in ${input.header} by ${input.function}${agent}`;
}

function inputDefault(input: InteractionInput): string | null {
  if (input.kind === 'auth') return input.secret === undefined ? null : `secret ${input.secret}`;
  return input.default === undefined ? null : JSON.stringify(input.default);
}

/** `mt interaction-get NAME [--version N]`: an interaction's version with its inputs, agent and tools. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-get')
    .description('Show an interaction: its agent, task, tools, and the inputs a run gives (which are required)')
    .argument('<name>', 'the interaction name')
    .option('--version <n>', 'a version instead of the latest', parseVersionArgument);
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags & { version?: number }) => {
    await withClient(io, flags, async (client) => {
      const interaction = await client.interactions.get(name, { version: flags.version });
      if (flags.json) return printJson(io, interaction);
      const { agent } = interaction;
      const summary = formatTable(
        ['FIELD', 'VALUE'],
        [
          ['name', interaction.name],
          ['version', interaction.version],
          ['enabled', interaction.enabled],
          ['agent', `${agent.name}: ${agent.agent} (version ${agent.version})`],
          ['tools', interaction.tools.map((t) => `${t.name} (version ${t.version})`).join(', ') || null],
          ['created', interaction.createdAt],
        ],
      );
      const inputs =
        interaction.inputs.length === 0
          ? 'none'
          : formatTable(
              ['NAME', 'KIND', 'REQUIRED', 'DEFAULT', 'USE', 'DESCRIPTION'],
              interaction.inputs.map((input) => [
                input.name,
                input.kind,
                input.required,
                inputDefault(input),
                inputUse(input),
                input.description,
              ]),
            );
      io.out(`${summary}\n\nTask:\n${interaction.task}\n\nInputs:\n${inputs}`);
    });
  });
};
