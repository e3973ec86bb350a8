import { defineErrors } from './define.js';

/**
 * The codes more than one package reports, defined once here: `api:secrets:not-found` (the store for a secret
 * id, the config compiler for a secret name a deploy's namespace lacks) and `api:connectors:secret-missing` (the
 * config compiler at deploy, the gateway at call time). The gateway reports its own without loading the compiler.
 * `api:runs:secret-forbidden`: the engine when a run names a secret its key may not use, the gateway when a call would
 * send one (the second line).
 */
export const sharedErrors = defineErrors({
  'api:secrets:not-found': {
    status: 404,
    message: 'No secret {ref} in this namespace',
    hint: 'List the secrets with `mt secret-list`, or create it with `mt secret-create`',
  },
  'api:connectors:secret-missing': {
    status: 422,
    message: '{tool} calls the Header connector {connector}, but {detail}',
    hint: 'give the tool auth = { header = "..." secret = @ref("...") }, or declare inputs.functions.auth for it in the interaction',
  },
  'api:runs:secret-forbidden': {
    status: 403,
    message:
      'This key may not use secret {secret} (run input {input}): an admin key uses every secret of the namespace, a user key only those granted to it',
    hint: 'create a user key granted the secret (`mt key-create --role user --secret <id>`), or start the run with an admin key',
  },
});

/** A code of {@link sharedErrors}. */
export type SharedErrorCode = ReturnType<typeof sharedErrors.codes>[number];
