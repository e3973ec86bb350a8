import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import { formatTable } from '../internal/table.js';
import type { RegisterCommand } from './index.js';

interface DeliveriesFlags extends ApiFlags {
  limit?: string;
}

/** `mt trigger-deliveries NAME`: a trigger's delivery log (an inbound webhook's, or a chaining trigger's). */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('trigger-deliveries')
    .description("Show a trigger's latest deliveries (the run each started, or why refused) and its counted rejections")
    .argument('<name>', 'the trigger name')
    .option('--limit <n>', 'at most this many deliveries (1-500, default 50)');
  addJsonOption(addConnectionOptions(command)).action(async (name: string, flags: DeliveriesFlags) => {
    await withClient(io, flags, async (client) => {
      const log = await client.triggers.deliveries(
        name,
        flags.limit === undefined ? {} : { limit: Number(flags.limit) },
      );
      if (flags.json) return printJson(io, log);
      if (log.deliveries.length === 0) io.err('no deliveries yet');
      else
        io.out(
          formatTable(
            ['EVENT', 'VERSION', 'STATUS', 'ANSWERED', 'RUN', 'RECEIVED', 'DETAIL'],
            log.deliveries.map((d) => [
              d.eventId,
              d.version,
              d.status,
              d.answerStatus ?? '-',
              d.runId ?? '-',
              d.receivedAt,
              d.code ? `[${d.code}] ${d.detail ?? ''}` : (d.detail ?? ''),
            ]),
          ),
        );
      const rejected = Object.entries(log.rejected);
      if (rejected.length > 0) io.out(`rejected: ${rejected.map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
    });
  });
};
