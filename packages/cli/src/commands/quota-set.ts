import { InvalidArgumentError } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';
import { printStanding } from './quotas.js';

interface QuotaSetFlags extends ApiFlags {
  runsPerDay?: number;
  toolCallsPerDay?: number;
  tokensPerMonth?: number;
}

function count(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('a whole number, 0 or more');
  return n;
}

/**
 * `mt quota-set NAMESPACE [--runs-per-day N] [--tool-calls-per-day N] [--tokens-per-month N]`: sets every quota of
 * the namespace at once (an operator key); a flag left out is no quota.
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('quota-set')
    .description("Set a namespace's quotas (operator key: an admin key of `default`); a quota left out is none")
    .argument('<namespace>', 'the namespace')
    .option('--runs-per-day <n>', 'runs started in a UTC day', count)
    .option('--tool-calls-per-day <n>', 'tool calls of the runs started in a UTC day', count)
    .option('--tokens-per-month <n>', 'model tokens (input + output) of the runs started in a UTC month', count);
  addJsonOption(addConnectionOptions(command)).action(async (namespace: string, flags: QuotaSetFlags) => {
    await withClient(io, flags, async (client) => {
      const standing = await client.namespaces.setQuotas(namespace, {
        runsPerDay: flags.runsPerDay ?? null,
        toolCallsPerDay: flags.toolCallsPerDay ?? null,
        tokensPerMonth: flags.tokensPerMonth ?? null,
      });
      if (flags.json) return printJson(io, standing);
      printStanding(io, standing);
    });
  });
};
