import type { Connector, Interaction, Json, Tool } from '@maitento/lang';
import type { CallCredential, RunBindingValue, ToolCallInput } from './types.js';

/** Reads a secret's value by id or by name; undefined when there is no such secret. */
export type SecretReader = (ref: { id: string } | { name: string }) => Promise<string | undefined>;

/** The run inputs that feed a call: the interaction declaring them, the calling agent, and the values given. */
export interface CallRunInputs {
  interaction: Interaction;
  /** The agent making the call; undefined takes the inputs declared for any agent (a call made by hand). */
  agent?: string;
  /**
   * The agent was handed its task by another agent (a child run): only the inputs that name it reach its calls,
   * never those declared for any agent.
   */
  handedTask?: boolean;
  inputs: Record<string, unknown>;
  /**
   * Whether the run's key may use the secret `id` a run input names (docs/security.md, "Who may use a secret");
   * asked before the secret is read. Left out (a call made by hand, the CLI's own secrets), every secret may be used.
   */
  mayUseSecret?: (id: string) => Promise<boolean>;
}

/**
 * The credential of an OAuth2 connector's call: the access token of the end user's connection at the connector's
 * provider (refreshed when it expired), or why there is none. Left out, an OAuth2 call names no end user.
 */
export type ConnectionTokenReader = (connector: Connector) => Promise<CallCredential | undefined>;

/** Everything one call of a tool is built from, by the engine, the server (REST and MCP) and the CLI alike. */
export interface CallParts {
  tool: Tool;
  connector: Connector;
  arguments: unknown;
  run?: CallRunInputs;
  readSecret: SecretReader;
  /** For an OAuth2 connector: the end user's access token (a run that names its end user). */
  connectionToken?: ConnectionTokenReader;
  idempotencyKey?: string;
  caller?: string;
  signal?: AbortSignal;
}

function forThisCall(tool: Tool, run: CallRunInputs) {
  return (input: { function: string; agent?: string }) =>
    input.function === tool.name &&
    (run.agent === undefined || (input.agent === undefined && !run.handedTask) || input.agent === run.agent);
}

/** The run-input bindings of `tool` with the run's values (none without run inputs). */
export function runBindingsOf(tool: Tool, run: CallRunInputs | undefined): RunBindingValue[] {
  if (run === undefined) return [];
  return run.interaction.inputs.functions.binding
    .filter(forThisCall(tool, run))
    .map((binding) => ({ binding, value: run.inputs[binding.name] as Json | undefined }));
}

/**
 * The credential of a call: the run's auth input for the tool (a secret by id), else that input's default secret
 * or the tool's own `auth` (a secret by name); `{ missing }` names a secret that does not exist, `{ forbidden }` one
 * the run's key may not use; none without auth.
 */
export async function credentialOf(
  parts: Pick<CallParts, 'tool' | 'run' | 'readSecret'> & Partial<Pick<CallParts, 'connector' | 'connectionToken'>>,
): Promise<CallCredential | undefined> {
  const { tool, run, readSecret } = parts;
  if (parts.connector?.auth === 'OAuth2') return parts.connectionToken?.(parts.connector);
  const input = run === undefined ? undefined : run.interaction.inputs.functions.auth.find(forThisCall(tool, run));
  const given = input === undefined ? undefined : run?.inputs[input.name];
  if (input !== undefined && typeof given === 'string' && given !== '') {
    // The second line behind the run's start: a secret the run's key may not use is never read nor sent.
    if (run?.mayUseSecret !== undefined && !(await run.mayUseSecret(given))) {
      return { forbidden: { secret: given, input: input.name } };
    }
    const value = await readSecret({ id: given });
    return value === undefined ? { missing: { secret: given } } : { header: input.header, value };
  }
  const byName = input?.secret !== undefined ? { header: input.header, secret: input.secret } : tool.auth;
  if (byName === undefined) return undefined;
  const value = await readSecret({ name: byName.secret });
  return value === undefined ? { missing: { secret: byName.secret } } : { header: byName.header, value };
}

/** The gateway's input for one call, built the one way every caller builds it. */
export async function callInputOf(parts: CallParts): Promise<ToolCallInput> {
  const input: ToolCallInput = {
    tool: parts.tool,
    connector: parts.connector,
    arguments: parts.arguments,
    runBindings: runBindingsOf(parts.tool, parts.run),
    credential: await credentialOf(parts),
  };
  if (parts.idempotencyKey !== undefined) input.idempotencyKey = parts.idempotencyKey;
  if (parts.caller !== undefined) input.caller = parts.caller;
  if (parts.signal !== undefined) input.signal = parts.signal;
  return input;
}
