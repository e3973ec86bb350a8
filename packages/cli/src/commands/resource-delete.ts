import type { Command } from 'commander';
import type { Maitento } from '@maitento/sdk/client';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { type Io, printJson } from '../internal/output.js';

// One `mt KIND-delete NAME` per deployed kind, named as the kind's other commands are (`extop-` for tools).
const KINDS = [
  { command: 'connector-delete', kind: 'connector', one: 'connector', client: (c: Maitento) => c.connectors },
  { command: 'extop-delete', kind: 'tool', one: 'tool', client: (c: Maitento) => c.extops },
  { command: 'agent-delete', kind: 'agent', one: 'agent', client: (c: Maitento) => c.agents },
  { command: 'interaction-delete', kind: 'interaction', one: 'interaction', client: (c: Maitento) => c.interactions },
  {
    command: 'auth-provider-delete',
    kind: 'auth-provider',
    one: 'auth provider',
    client: (c: Maitento) => c.authProviders,
  },
  { command: 'schedule-delete', kind: 'schedule', one: 'schedule', client: (c: Maitento) => c.schedules },
  { command: 'trigger-delete', kind: 'trigger', one: 'trigger', client: (c: Maitento) => c.triggers },
] as const;

/**
 * `mt connector-delete NAME`, `mt extop-delete NAME`, `mt agent-delete NAME`, `mt interaction-delete NAME`,
 * `mt auth-provider-delete NAME`, `mt schedule-delete NAME`, `mt trigger-delete NAME`: delete a deployed resource
 * (decision 0295); refused, naming the run, while a run not yet ended pins it.
 */
export function register(program: Command, io: Io): void {
  for (const spec of KINDS) {
    const command = program
      .command(spec.command)
      .description(
        `Delete a ${spec.one}: no longer listed, found or started (refused while a run not yet ended pins it)`,
      )
      .argument('<name>', `the ${spec.one}'s name`);
    addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: ApiFlags) => {
      await withClient(io, flags, async (client) => {
        await spec.client(client).delete(name);
        if (flags.json) return printJson(io, { kind: spec.kind, name, deleted: true });
        io.err(`deleted ${spec.one} ${name}`);
      });
    });
  }
}
