import { KEY_ROLES, type KeyRole } from '@maitento/sdk/client';
import { Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt key-create --role admin|user|runner|approver [--name NAME] [--secret ID]...`: prints the new key, shown this once. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('key-create')
    .description('Create an API key for this namespace; prints the key, which is shown only this once')
    .addOption(
      new Option(
        '--role <role>',
        "admin (deploy, versions, secrets, keys), user (a person's app: reads, runs, answers approvals), " +
          'runner (programs, agents, MCP hosts: runs and reads its own runs, never answers an approval) or ' +
          'approver (reads, answers approvals); see docs/roles.md',
      )
        .choices([...KEY_ROLES])
        .makeOptionMandatory(),
    )
    .option('--name <name>', 'a label to recognise the key by')
    .option(
      '--secret <id>',
      'grant the key a secret by id (repeat for more): a key other than admin names only its granted secrets in a run',
      (id: string, ids: string[]) => [...ids, id],
      [] as string[],
    );
  addJsonOption(addConnectionOptions(command)).action(
    async (flags: ApiFlags & { role: KeyRole; name?: string; secret: string[] }) => {
      await withClient(io, flags, async (client) => {
        const created = await client.keys.create({
          role: flags.role,
          ...(flags.name ? { name: flags.name } : {}),
          ...(flags.secret.length > 0 ? { secrets: flags.secret } : {}),
        });
        if (flags.json) return printJson(io, created);
        io.out(created.key);
        io.err(`created ${created.role} key ${created.id}; the key went to standard output, only this once: keep it`);
      });
    },
  );
};
