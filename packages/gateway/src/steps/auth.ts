import { addressBlockedError } from '@maitento/egress';
import { sharedErrors } from '@maitento/errors';
import { gatewayErrors } from '../errors.js';
import type { GatewayOptions, ToolCallInput } from '../gateway/types.js';
import { abortable } from '../internal/deadline.js';
import type { ToolPlan } from '../internal/plan.js';

/** The credential header of a call and the secret values that must never be shown. */
export interface ResolvedAuth {
  header: string;
  value: string;
  secrets: string[];
  /** True for a platform token: the call may go only to the platform's origin. */
  platform: boolean;
}

/**
 * Step 5: the credential header for the connector's `auth`, or undefined for `None`. A platform token is asked for
 * and raced with `signal` (the call's deadline).
 */
export async function resolveAuth(
  plan: ToolPlan,
  input: ToolCallInput,
  platform: GatewayOptions['platform'] | undefined,
  platformOrigin: string | undefined,
  signal: AbortSignal,
): Promise<ResolvedAuth | undefined> {
  const connector = plan.connector.connector;
  if (connector.auth === 'None') return undefined;
  if (connector.auth === 'Maitento') {
    if (platform === undefined || platformOrigin !== plan.connector.template.origin) {
      throw addressBlockedError(plan.connector.template.hostname);
    }
    const token = await abortable(platform.token({ tool: input.tool, connector, caller: input.caller }), signal);
    return { header: 'authorization', value: `Bearer ${token}`, secrets: [token], platform: true };
  }
  const credential = input.credential;
  if (connector.auth === 'OAuth2') return oauth2Auth(plan, input.credential);
  if (credential === undefined) {
    throw sharedErrors.create('api:connectors:secret-missing', {
      tool: plan.tool.name,
      connector: connector.name,
      detail: 'this call was given no secret (an optional inputs.functions.auth input left empty?)',
    });
  }
  if ('forbidden' in credential) {
    throw sharedErrors.create('api:runs:secret-forbidden', {
      secret: credential.forbidden.secret,
      input: credential.forbidden.input,
    });
  }
  if (!('header' in credential) && !('missing' in credential)) {
    // A bearer or authorization credential is an OAuth2 connector's only: never sent for another auth.
    throw sharedErrors.create('api:connectors:secret-missing', {
      tool: plan.tool.name,
      connector: connector.name,
      detail: 'this call was given no secret',
    });
  }
  if ('missing' in credential) {
    throw gatewayErrors.create('api:gateway:secret-not-found', {
      secret: credential.missing.secret,
      connector: connector.name,
    });
  }
  return headerAuth(credential);
}

/** A secret sent in a header: the name lower-cased, a bare `authorization` value as `Bearer <value>`. */
export function headerAuth(credential: { header: string; value: string }): ResolvedAuth {
  const header = credential.header.toLowerCase();
  const value =
    header === 'authorization' && !credential.value.includes(' ') ? `Bearer ${credential.value}` : credential.value;
  return { header, value, secrets: [credential.value], platform: false };
}

/**
 * An OAuth2 connector's credential: the end user's access token as `Authorization: Bearer`, sent (like a secret)
 * only to the connector's origin and masked wherever the call is shown. No token, no call.
 */
function oauth2Auth(plan: ToolPlan, credential: ToolCallInput['credential']): ResolvedAuth {
  const connector = plan.connector.connector;
  if (credential !== undefined && 'bearer' in credential) {
    return {
      header: 'authorization',
      value: `Bearer ${credential.bearer}`,
      secrets: [credential.bearer],
      platform: false,
    };
  }
  if (credential !== undefined && 'failed' in credential) throw credential.failed;
  if (credential !== undefined && 'authorization' in credential) {
    throw gatewayErrors.create('api:connections:authorization-required', {
      tool: plan.tool.name,
      ...credential.authorization,
    });
  }
  throw gatewayErrors.create('api:connections:end-user-missing', { tool: plan.tool.name, connector: connector.name });
}
