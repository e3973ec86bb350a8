import { InvalidArgumentError } from 'commander';
import { type ApiFlags, addConnectionOptions, addJsonOption, withClient } from '../internal/api.js';
import { printJson } from '../internal/output.js';
import type { RegisterCommand } from './index.js';

function seconds(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new InvalidArgumentError('a whole number of seconds, 0 or more');
  return value;
}

/** `mt webhook-rotate ID [--grace SECONDS]`: a new signing secret, printed once; the old one signs too meanwhile. */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('webhook-rotate')
    .description(
      "Rotate a webhook endpoint's signing secret; prints the new one, shown only this once. During the grace both sign",
    )
    .argument('<id>', 'the endpoint id')
    .option('--grace <seconds>', 'how long the old secret signs too (default 86400, a day; 0: not at all)', seconds);
  addJsonOption(addConnectionOptions(command)).action(async (id: string, flags: ApiFlags & { grace?: number }) => {
    await withClient(io, flags, async (client) => {
      const rotated = await client.webhooks.rotateSecret(
        id,
        flags.grace === undefined ? {} : { graceSeconds: flags.grace },
      );
      if (flags.json) return printJson(io, rotated);
      io.out(rotated.secret);
      io.err(
        rotated.endpoint.previousSecretUntil === null
          ? `rotated the secret of webhook ${id}; the old one no longer signs`
          : `rotated the secret of webhook ${id}; the old one signs too until ${rotated.endpoint.previousSecretUntil}`,
      );
    });
  });
};
