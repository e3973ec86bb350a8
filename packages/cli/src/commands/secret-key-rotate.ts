import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

/** `mt secret-key-rotate`: re-wraps every secret's data key under the server's current master key. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('secret-key-rotate')
    .description(
      "Re-wrap every secret's data key under the server's MT_SECRET_KEY (values untouched; run it again after a failure)",
    )
    .option('--status', 'only show which master key ids the secrets are under')
    .option('--batch-size <n>', 'rows re-wrapped per transaction (1-1000, default 100)', (v) => Number(v));
  addJsonOption(addConnectionOptions(command)).action(
    async (flags: ApiFlags & { status?: boolean; batchSize?: number }) => {
      await withClient(io, flags, async (client) => {
        if (flags.status) {
          const status = await client.secrets.keyStatus();
          if (flags.json) return printJson(io, status);
          io.out(`current master key: ${status.currentKeyId}`);
          for (const [id, count] of Object.entries(status.secretsByKeyId)) io.out(`  ${id}: ${count} secrets`);
          return;
        }
        const rotation = await client.secrets.rotateMasterKey(
          flags.batchSize === undefined ? {} : { batchSize: flags.batchSize },
        );
        if (flags.json) return printJson(io, rotation);
        io.err(
          `re-wrapped ${rotation.rewrapped} data keys under master key ${rotation.keyId}` +
            (rotation.converted > 0 ? ` (and converted ${rotation.converted} older secrets)` : ''),
        );
        const retired = rotation.status.unusedPreviousKeyIds;
        if (retired.length > 0)
          io.err(`no secret is under ${retired.join(', ')} any more: remove it from MT_SECRET_KEY_PREVIOUS`);
      });
    },
  );
};
