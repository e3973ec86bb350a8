import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { Resolver } from '@maitento/egress';
import { isMtError } from '@maitento/errors';
import type { CallCredential, Gateway, ToolCallInput, ToolCallResult } from '@maitento/gateway';
import type { Connector, Interaction, Json, RepoFile, Tool } from '@maitento/lang';
import { ConflictError } from '@maitento/sdk/client';
import { cliErrors } from '../errors.js';
import { ExitCode } from '../internal/exit-codes.js';
import { assertConfigRepo, compileLocalRepo, printDiagnostics } from '../internal/local-repo.js';
import { CommandExit, type Io, printJson, reportError } from '../internal/output.js';
import { type ApiFlags, addConnectionOptions, withClient } from '../internal/api.js';
import type { RegisterCommand } from './index.js';

interface Flags extends ApiFlags {
  args?: string;
  endUser?: string;
  input: string[];
  secret: string[];
  interaction?: string;
  repo: string;
  dryRun?: boolean;
  approve?: boolean;
  json?: boolean;
}

function invalid(reason: string) {
  return cliErrors.create('api:cli:call-options-invalid', { reason });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `NAME=VALUE` pairs into a map; the value may contain `=`. */
function pairs(values: string[], option: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of values) {
    const at = entry.indexOf('=');
    if (at <= 0) {
      // A --secret without NAME= is most likely the secret's value itself, so it is not repeated.
      const shown = option === '--secret' ? 'value' : JSON.stringify(entry);
      throw invalid(`${option} ${shown} is not NAME=VALUE`);
    }
    out.set(entry.slice(0, at), entry.slice(at + 1));
  }
  return out;
}

/** `MT_RESOLVE="host=ip,host=ip"`: fixed answers for some names (each still judged by the egress policy). */
export function resolverFromEnv(value: string | undefined): Resolver | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const fixed = new Map<string, string[]>();
  for (const entry of value.split(',')) {
    const [host, address] = entry.split('=').map((s) => s.trim());
    if (!host || !address) throw invalid(`MT_RESOLVE entry ${JSON.stringify(entry)} is not host=ip`);
    fixed.set(host.toLowerCase(), [...(fixed.get(host.toLowerCase()) ?? []), address]);
  }
  return async (hostname) => {
    const answer = fixed.get(hostname.toLowerCase().replace(/\.$/, ''));
    if (answer === undefined) return (await import('@maitento/egress')).systemResolver(hostname);
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

/** The interaction whose run inputs feed this call: the one named, or the only one with bindings for the tool. */
function chooseInteraction(
  interactions: Interaction[],
  tool: Tool,
  name: string | undefined,
  needed: boolean,
): Interaction | undefined {
  if (name !== undefined) {
    const found = interactions.find((i) => i.name === name);
    if (found === undefined) throw invalid(`the repo has no interaction ${name}`);
    return found;
  }
  if (!needed) return undefined;
  const using = interactions.filter(
    (i) =>
      i.inputs.functions.binding.some((b) => b.function === tool.name) ||
      i.inputs.functions.auth.some((a) => a.function === tool.name),
  );
  if (using.length === 1) return using[0];
  if (using.length === 0)
    throw invalid(`no interaction binds run inputs to ${tool.name}, so --input has nothing to fill`);
  throw invalid(
    `several interactions bind inputs of ${tool.name} (${using.map((i) => i.name).join(', ')}); choose one with --interaction`,
  );
}

async function printResult(io: Io, result: ToolCallResult, json: boolean): Promise<void> {
  if (json) {
    const { ok, status, body, error, code, truncated, request } = result;
    printJson(io, { ok, status, body, error, code, truncated, request });
    return;
  }
  if (result.status !== undefined) io.err(`HTTP ${result.status}`);
  if (result.truncated !== undefined) io.err(`the body was cut at ${result.truncated.limit} bytes`);
  if (!result.ok) io.err(`error [${result.code}]: ${result.error}`);
  // The gateway's message speaks of runs; called by hand, the caller may approve the call themselves.
  if (result.code === 'api:approvals:required') {
    io.err('hint: pass --approve to approve this call yourself: it is then made, once, with your own --secret');
  }
  // A tool's result carries the error's message and code, not its hint: the registry's, which names MT_RESOLVE.
  if (result.code === 'api:egress:name-not-resolved') {
    const { egressErrors } = await import('@maitento/egress');
    io.err(`hint: ${egressErrors.specs['api:egress:name-not-resolved'].hint}`);
  }
  if (result.body !== undefined && result.body !== '') {
    io.out(typeof result.body === 'string' ? result.body : JSON.stringify(result.body, null, 2));
  }
}

/** The repo compiled again with the remote tool of the MCP connector `connector`, listed from its server. */
async function withRemoteTool(
  gateway: Gateway,
  files: RepoFile[],
  connector: Connector,
  toolName: string,
  credential: CallCredential | undefined,
): Promise<{ tool: Tool; connector: Connector }> {
  const mcp = connector.mcp!;
  const listed = await gateway.listMcpTools(
    { url: mcp.url },
    { credential: credential !== undefined && 'header' in credential ? credential : undefined },
  );
  const remote = listed.find((t) => t.name === mcp.tool);
  const { compileRepo, didYouMean } = await import('@maitento/lang');
  if (remote === undefined) {
    const names = listed.map((t) => t.name);
    const guess = didYouMean(mcp.tool, names);
    throw cliErrors.create('api:cli:mcp-tool-missing', {
      connector: connector.name,
      url: mcp.url,
      tool: mcp.tool,
      suggestion: guess === undefined ? '' : ` (did you mean ${guess}?)`,
      known: names.slice(0, 50).join(', ') || '(none)',
    });
  }
  const { egressPolicyFromEnv } = await import('@maitento/egress');
  const remoteTools = new Map([[connector.name, { description: remote.description, inputSchema: remote.inputSchema }]]);
  const again = compileRepo(files, {
    egress: egressPolicyFromEnv(process.env),
    platformOrigin: process.env.MT_PUBLIC_URL?.trim() || undefined,
    remoteTools,
  });
  const errors = again.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) {
    const detail = errors.map((d) => `${d.file}:${d.line}:${d.column} ${d.message} [${d.code}]`).join('; ');
    throw cliErrors.create('api:cli:call-options-invalid', { reason: `with the remote tool's schema: ${detail}` });
  }
  return {
    tool: again.tools.find((t) => t.name === toolName)!,
    connector: again.connectors.find((c) => c.name === connector.name)!,
  };
}

// Called by hand, the caller is the person who approves: --approve says so, for a tool that requires it. The call
// then goes the one way an approved call goes, through callApproved with the hash the caller's request has now.
async function callOnce(gateway: Gateway, input: ToolCallInput, approve: boolean): Promise<ToolCallResult> {
  if (!approve || !input.tool.requiresApproval) return gateway.call(input);
  const prepared = await gateway.prepare(input);
  if (!('hash' in prepared)) return prepared;
  return gateway.callApproved(input, { hash: prepared.hash, consume: async () => undefined });
}

function parseArgs(flags: Flags): unknown {
  if (flags.args === undefined) return {};
  try {
    return JSON.parse(flags.args);
  } catch {
    throw invalid('--args is not JSON');
  }
}

/**
 * `--end-user ID`: the person's connection is held by the server, so the deployed tool is called there
 * (`POST /v1/extops/{name}/call` with `endUser`). Without a usable connection the server answers 409 with their
 * connect link: printed on stdout (as `mt connection-link` prints one), the error on stderr, exit 1.
 */
async function callForEndUser(io: Io, toolName: string, flags: Flags, endUser: string): Promise<void> {
  const local = (['input', 'secret'] as const).filter((f) => flags[f].length > 0).map((f) => `--${f}`);
  if (flags.interaction !== undefined) local.push('--interaction');
  if (flags.dryRun) local.push('--dry-run');
  if (flags.approve) local.push('--approve');
  if (local.length > 0) {
    throw invalid(`--end-user calls the deployed tool through the server, which takes no ${local.join(', ')}`);
  }
  const args = parseArgs(flags) as Record<string, Json>;
  await withClient(io, flags, async (client) => {
    let result: Awaited<ReturnType<typeof client.extops.call>>;
    try {
      result = await client.extops.call(toolName, { arguments: args, endUser });
    } catch (error) {
      const link = error instanceof ConflictError ? error.authorization : undefined;
      if (link === undefined) throw error;
      if (flags.json)
        printJson(io, {
          error: (error as ConflictError).error,
          code: (error as ConflictError).code,
          authorization: link,
        });
      else {
        io.err(`error [${(error as ConflictError).code}]: ${(error as ConflictError).error}`);
        io.err(`hint: ${link.endUser} connects by opening this URL (once, before ${link.expiresAt}); then call again`);
        io.out(link.url);
      }
      throw new CommandExit(ExitCode.UserError);
    }
    await printResult(io, result as ToolCallResult, flags.json === true);
    if (!result.ok) throw new CommandExit(ExitCode.UserError);
  });
}

async function extopCall(io: Io, toolName: string, flags: Flags): Promise<void> {
  if (flags.endUser !== undefined) return callForEndUser(io, toolName, flags, flags.endUser);
  const dir = resolve(flags.repo);
  await assertConfigRepo(flags.repo);
  const args = parseArgs(flags);
  const inputs = pairs(flags.input, '--input');
  const secrets = pairs(flags.secret, '--secret');
  const { compiled, sources, errors, files } = await compileLocalRepo(dir);
  if (errors.length > 0) {
    await printDiagnostics(io, compiled.diagnostics, sources);
    throw cliErrors.create('api:cli:config-invalid', { count: errors.length });
  }
  let tool = compiled.tools.find((t) => t.name === toolName);
  if (tool === undefined) throw cliErrors.create('api:cli:tool-not-found', { dir: flags.repo, tool: toolName });
  let connector = compiled.connectors.find((c) => c.name === tool!.connector)!;
  const interaction = chooseInteraction(compiled.interactions, tool, flags.interaction, inputs.size > 0);

  // The run inputs are checked here (required, known); the call is built from them by the gateway's callInputOf.
  const used = new Set<string>();
  for (const binding of interaction?.inputs.functions.binding ?? []) {
    if (binding.function !== tool.name) continue;
    used.add(binding.name);
    const value = inputs.get(binding.name);
    if (binding.required && (value === undefined || value === '') && binding.default === undefined) {
      throw invalid(`the run input ${binding.name} is required: pass --input ${binding.name}=VALUE`);
    }
  }
  for (const auth of interaction?.inputs.functions.auth ?? []) {
    if (auth.function !== tool.name) continue;
    used.add(auth.name);
    if (!inputs.get(auth.name) && auth.secret === undefined && auth.required)
      throw invalid(`the run input ${auth.name} is required: pass --input ${auth.name}=SECRET_NAME`);
  }
  for (const name of inputs.keys()) {
    if (!used.has(name)) throw invalid(`the interaction ${interaction?.name} has no input ${name} for ${tool.name}`);
  }
  const [{ callInputOf, createGateway, credentialOf, isPreparedRequest }, { egressPolicyFromEnv }] = await Promise.all([
    import('@maitento/gateway'),
    import('@maitento/egress'),
  ]);
  const run = interaction && { interaction, inputs: Object.fromEntries(inputs) };
  // By hand a secret is named (an auth input's value too, where a run holds a secret's id): --secret gives its value.
  const readSecret = async (ref: { id: string } | { name: string }) => secrets.get('id' in ref ? ref.id : ref.name);
  const credential = await credentialOf({ tool, run, readSecret });

  // A tool with `auth = "Maitento"` calls the server's own API (MT_PUBLIC_URL); called by hand, it sends the
  // caller's own key (MT_API_KEY) where a run would send a platform token of its namespace.
  const publicUrl = process.env.MT_PUBLIC_URL?.trim() || undefined;
  const ownKey = process.env.MT_API_KEY?.trim() || undefined;
  if (connector.auth === 'Maitento' && (publicUrl === undefined || ownKey === undefined)) {
    throw invalid(
      `${tool.name} calls Maitento's own API (auth = "Maitento"): set MT_PUBLIC_URL to the server's URL and MT_API_KEY to the key the call is made with`,
    );
  }
  const gateway = createGateway({
    policy: egressPolicyFromEnv(),
    resolver: resolverFromEnv(process.env.MT_RESOLVE),
    platform:
      publicUrl === undefined || ownKey === undefined ? undefined : { origin: publicUrl, token: async () => ownKey },
  });
  try {
    // As a deploy does: an MCP connector's arguments are the remote tool's, listed from its server first.
    if (connector.mcp !== undefined) {
      ({ tool, connector } = await withRemoteTool(gateway, files, connector, toolName, credential));
    }
    const input = await callInputOf({
      tool,
      connector,
      arguments: args,
      run,
      readSecret,
      idempotencyKey: randomUUID(),
    });
    if (flags.dryRun) {
      const prepared = await gateway.prepare(input);
      if (!isPreparedRequest(prepared)) {
        await printResult(io, prepared, flags.json === true);
        throw new CommandExit(ExitCode.UserError);
      }
      if (flags.json) printJson(io, { ok: true, request: prepared.view });
      else {
        const { method, url, headers, body } = prepared.view;
        const lines = [`${method} ${url}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
        if (body !== undefined) lines.push('', JSON.stringify(body, null, 2));
        io.out(lines.join('\n'));
      }
      return;
    }
    const result = await callOnce(gateway, input, flags.approve === true);
    await printResult(io, result, flags.json === true);
    if (!result.ok) throw new CommandExit(ExitCode.UserError);
  } finally {
    await gateway.close();
  }
}

/**
 * `mt extop-call TOOL`: makes (or with --dry-run, renders) one call of a tool of the local config repo, no server;
 * with `--end-user ID`, one call of the deployed tool through the server, for that person (their connection).
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('extop-call')
    .description('Call a tool of the local config repo once, through the gateway, with no server')
    .argument('<tool>', 'the tool (extop) name')
    .option('--args <json>', 'the model\'s arguments: {"request":{...},"additionalInputs":{"path.x":...}}')
    .option('--input <name=value>', 'a run input of the interaction that binds values into this tool', collect, [])
    .option('--interaction <name>', 'the interaction whose inputs.functions.binding/auth --input fills')
    .option('--secret <name=value>', "a secret's value, by the secret's name, for this call only", collect, [])
    .option('--repo <dir>', 'the config repo', '.')
    .option('--dry-run', 'do every step but sending (name resolution and address check included) and print the request')
    .option('--approve', 'approve this call yourself: needed to call a tool with requiresApproval = true')
    .option('--json', 'print the result as JSON on stdout')
    .option(
      '--end-user <id>',
      'call the deployed tool through the server for this end user (an auth = "OAuth2" connector uses their connection; without one their connect link is printed)',
    )
    .addHelpText(
      'after',
      `
Environment:
  MT_EGRESS_ALLOW   CIDRs and names tools may call although they are not public (off by default)
  MT_RESOLVE        host=ip,host=ip: fixed answers for some names, each still judged by the address rules
  MT_API_URL, MT_API_KEY   the server and key --end-user calls through (or --api, --key, mt login)`,
    );
  addConnectionOptions(command).action(async (toolName: string, flags: Flags) => {
    try {
      await extopCall(io, toolName, flags);
    } catch (error) {
      if (error instanceof CommandExit) throw error;
      if (!isMtError(error)) throw error;
      throw new CommandExit(reportError(io, error, flags.json === true));
    }
  });
};
