import type { QuotaStanding } from '@maitento/sdk';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { type Io, printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

/** Prints a namespace's quotas and what it used of them, one line a quota. */
export function printStanding(io: Io, standing: QuotaStanding): void {
  const { quotas, used } = standing;
  const quota = (value: number | null) => (value === null ? 'none' : String(value));
  io.out(
    formatTable(
      ['QUOTA', 'USED', 'LIMIT', 'PERIOD ENDS'],
      [
        ['runs a day', used.runsToday, quota(quotas.runsPerDay), standing.dayEndsAt],
        ['tool calls a day', used.toolCallsToday, quota(quotas.toolCallsPerDay), standing.dayEndsAt],
        ['tokens a month', used.tokensThisMonth, quota(quotas.tokensPerMonth), standing.monthEndsAt],
      ],
    ),
  );
}

/**
 * `mt quotas [NAMESPACE]`: the quotas of the key's namespace (an admin key), or of NAMESPACE (an operator key), and
 * what it used of them this UTC day and month (docs/quotas.md).
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('quotas')
    .description(
      "Show the namespace's quotas and what it used of them today and this month (admin key; another namespace: operator key)",
    )
    .argument('[namespace]', "a namespace to show (an operator key); default: the key's own");
  addJsonOption(addConnectionOptions(command)).action(async (namespace: string | undefined, flags: ApiFlags) => {
    await withClient(io, flags, async (client) => {
      const standing =
        namespace === undefined ? await client.usage.quotas() : await client.namespaces.getQuotas(namespace);
      if (flags.json) return printJson(io, standing);
      printStanding(io, standing);
    });
  });
};
