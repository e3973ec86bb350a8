// Secrets are named only by those who may use them (docs/security.md, "Who may use a secret"). The rule itself is the
// store's `secretAccess`; this module applies it to a run's auth inputs: refused at the start, hidden in the views.
import type { Interaction } from '@maitento/lang';
import { isUuid, type Queryable, secretAccess } from '@maitento/store';
import { sharedErrors } from '@maitento/errors';
import type { RunEvent, RunViewer } from '../api/types.js';

/** What a secret input shows to a key that may not use its secret. */
export const HIDDEN_SECRET: { readonly secret: true } = Object.freeze({ secret: true });

// The run's auth inputs that name a secret: input name → secret id.
function namedSecrets(interaction: Interaction, inputs: Record<string, unknown>): Map<string, string> {
  const named = new Map<string, string>();
  for (const auth of interaction.inputs.functions.auth) {
    const value = inputs[auth.name];
    if (typeof value === 'string' && value !== '') named.set(auth.name, value.toLowerCase());
  }
  return named;
}

/**
 * Refuses (`api:runs:secret-forbidden`) a run whose auth inputs name a secret of the namespace that `keyId` may not
 * use. An id that is no secret of the namespace passes: the run starts and its call fails, as the seed documents.
 */
export async function checkSecretInputs(
  db: Queryable,
  namespace: string,
  keyId: string,
  interaction: Interaction,
  inputs: Record<string, unknown>,
): Promise<void> {
  const named = namedSecrets(interaction, inputs);
  if (named.size === 0) return;
  const access = await secretAccess(db, namespace, keyId, [...named.values()]);
  for (const [input, secret] of named) {
    if (access.get(secret) === false) throw sharedErrors.create('api:runs:secret-forbidden', { secret, input });
  }
}

/**
 * `inputs` as `viewer` may see them: each secret input whose secret it may not use is {@link HIDDEN_SECRET}. A run's
 * interaction version is pinned and kept; were it gone (`undefined`), every input that is a GUID hides.
 */
export async function visibleInputs(
  db: Queryable,
  namespace: string,
  viewer: RunViewer,
  interaction: Interaction | undefined,
  inputs: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (interaction === undefined) {
    return Object.fromEntries(
      Object.entries(inputs).map(([k, v]) => [k, typeof v === 'string' && isUuid(v) ? HIDDEN_SECRET : v]),
    );
  }
  const named = namedSecrets(interaction, inputs);
  if (named.size === 0) return inputs;
  const access = await secretAccess(db, namespace, viewer.keyId, [...named.values()]);
  const shown = { ...inputs };
  for (const [input, secret] of named) if (access.get(secret) !== true) shown[input] = HIDDEN_SECRET;
  return shown;
}

/** The interaction a run (or its `run-started` event) was started on, as stored. */
export type InteractionOf = (ref: { name: string; version: number }) => Promise<Interaction | undefined>;

/** `events` as `viewer` may see them: the inputs of a `run-started` event through {@link visibleInputs}. */
export async function visibleEvents(
  db: Queryable,
  namespace: string,
  viewer: RunViewer,
  interactionOf: InteractionOf,
  events: RunEvent[],
): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for (const event of events) {
    const data = event.data as { interaction?: { name: string; version: number }; inputs?: Record<string, unknown> };
    if (event.type !== 'run-started' || data.interaction === undefined || data.inputs === undefined) {
      out.push(event);
      continue;
    }
    const interaction = await interactionOf(data.interaction);
    const inputs = await visibleInputs(db, namespace, viewer, interaction, data.inputs);
    out.push(inputs === data.inputs ? event : { ...event, data: { ...event.data, inputs } });
  }
  return out;
}
