import { type Command, InvalidArgumentError } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from './api.js';
import { type Io, printJson } from './output.js';

/** Parses a VERSION argument: a whole number from 1; anything else is a usage error (exit 2). */
export function parseVersionArgument(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError('a version is a whole number from 1');
  return Number(value);
}

/** Which of the four `-version-disable`/`-version-enable` commands to add. */
export interface VersionToggle {
  kind: 'connector' | 'extop';
  action: 'disable' | 'enable';
}

/** Adds `mt <kind>-version-<action> NAME VERSION`. */
export function registerVersionToggle(program: Command, io: Io, { kind, action }: VersionToggle): void {
  const noun = kind === 'connector' ? 'connector' : 'tool (extop)';
  const effect =
    action === 'disable' ? 'every call pinned to it fails until it is enabled again' : 'calls pinned to it work again';
  const command = program
    .command(`${kind}-version-${action}`)
    .description(`${action === 'disable' ? 'Disable' : 'Enable'} one version of a ${noun}: ${effect}`)
    .argument('<name>', `the ${noun}'s name`)
    .argument('<version>', 'the version number', parseVersionArgument);
  addJsonOption(addConnectionOptions(command)).action(async (name: string, version: number, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const resource = kind === 'connector' ? client.connectors : client.extops;
      const state =
        action === 'disable'
          ? await resource.disableVersion(name, version)
          : await resource.enableVersion(name, version);
      if (flags.json) return printJson(io, state);
      io.err(`${state.enabled ? 'enabled' : 'disabled'} ${kind} ${state.name} version ${state.version}`);
    });
  });
}
