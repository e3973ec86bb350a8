import { InvalidArgumentError, Option } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printRunJson, usageLine } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

function parseTokens(value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError('a whole number of tokens, 1 or more');
  return Number(value);
}

function parseUsd(value: string): number {
  const usd = Number(value);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || !(usd > 0) || usd > 1e9)
    throw new InvalidArgumentError('an amount of US dollars above 0, such as 1.50');
  return usd;
}

interface BudgetFlags extends ApiFlags {
  tokens?: number;
  costUsd?: number;
  onExceeded?: 'wait' | 'fail';
}

/** `mt interaction-budget RUN_ID [--tokens N] [--cost-usd X] [--on-exceeded wait|fail]`: extends a run's budget. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-budget')
    .description('Extend the budget of a run that reached it (PendingBudget): the run goes on')
    .argument('<run-id>', 'the run id')
    .option('--tokens <n>', 'the new limit on input + output tokens', parseTokens)
    .option('--cost-usd <usd>', 'the new limit in US dollars', parseUsd)
    .addOption(
      new Option(
        '--on-exceeded <what>',
        'when it reaches the new budget: wait again or fail (fail and no larger limit: it fails now)',
      ).choices(['wait', 'fail']),
    );
  addJsonOption(addConnectionOptions(command)).action(async (runId: string, flags: BudgetFlags) => {
    if (flags.tokens === undefined && flags.costUsd === undefined && flags.onExceeded === undefined) {
      command.error('error: give --tokens, --cost-usd or both (the new limits)', { exitCode: 2 });
    }
    await withClient(io, flags, async (client) => {
      const run = await client.interactionRuns.extendBudget(runId, {
        ...(flags.tokens === undefined ? {} : { tokens: flags.tokens }),
        ...(flags.costUsd === undefined ? {} : { costUsd: flags.costUsd }),
        ...(flags.onExceeded === undefined ? {} : { onExceeded: flags.onExceeded }),
      });
      if (flags.json) return printRunJson(io, run);
      if (run.status === 'Failed') {
        io.err(`let run ${run.id} fail (${run.error?.code ?? 'Failed'}): ${usageLine(run) ?? ''}`);
      } else io.err(`extended the budget of run ${run.id} (status ${run.status}): ${usageLine(run) ?? ''}`);
    });
  });
};
