import type { ApprovalView, RunEvent, RunView } from '@maitento/sdk';
import { type Io, printJson } from './output.js';
import { formatTable } from './table.js';

/** The most characters of a tool result or model text shown on one line of a run's log. */
const SHOWN = 200;

function shorten(text: string, max = SHOWN): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** What `--json` prints for a run: the whole run view (its `id`, `status`, `pendingApproval`, `result`, `error`...). */
export function printRunJson(io: Io, run: RunView): void {
  printJson(io, run);
}

/** One readable line (or a few) for an event of a run, as `interaction-logs` and `interaction-run --wait` print it. */
export function describeEvent(event: RunEvent): string {
  const d = event.data;
  const time = event.at.slice(11, 19);
  const prefix = `${String(event.seq).padStart(3)} ${time}`;
  switch (event.type) {
    case 'run-started':
      return `${prefix} run started`;
    case 'model-response': {
      const calls = Array.isArray(d.toolCalls) ? (d.toolCalls as { name?: unknown }[]) : [];
      const said = str(d.text);
      const lines: string[] = [];
      if (said) lines.push(`${prefix} model said: ${shorten(said)}`);
      if (calls.length > 0) lines.push(`${prefix} model asks for ${calls.map((c) => text(c.name)).join(', ')}`);
      return lines.length > 0 ? lines.join('\n') : `${prefix} model answered`;
    }
    case 'tool-call-started':
      return `${prefix} calling ${text(d.name)} with ${shorten(JSON.stringify(d.arguments ?? {}))}`;
    case 'tool-result': {
      const status = typeof d.status === 'number' ? ` (HTTP ${d.status})` : '';
      const outcome = d.ok === false ? 'failed' : 'returned';
      return `${prefix} ${text(d.name)} ${outcome}${status}: ${shorten(text(d.result ?? ''))}`;
    }
    case 'approval-requested': {
      const approval = d.approval as Partial<ApprovalView> | undefined;
      return `${prefix} approval requested for ${approval?.functionName ?? 'a call'} (approval ${approval?.id ?? '?'})`;
    }
    case 'approval-answered': {
      const by = d.by as { keyId?: string; keyName?: string } | undefined;
      const verdict = d.decision === 'approve' ? 'approved' : d.decision === 'reject' ? 'rejected' : 'answered';
      const who = by ? ` by ${keyLabel(by.keyName, by.keyId)}` : '';
      const why = typeof d.reason === 'string' && d.reason !== '' ? `: ${d.reason}` : '';
      // An edited call (decision 0215): the call made is the edited one, not the model's shown at `calling`.
      const editor = d.editedBy as { keyId?: string; keyName?: string } | undefined;
      const edit =
        d.arguments === undefined
          ? ''
          : `, the call edited${editor ? ` by ${keyLabel(editor.keyName, editor.keyId)}` : ''} to ${shorten(JSON.stringify(d.arguments))}`;
      return `${prefix} approval ${text(d.approvalId)} ${verdict}${who}${edit}${why}`;
    }
    case 'run-waiting': {
      const calls = Array.isArray(d.toolCallIds) ? d.toolCallIds.length : 0;
      if (Array.isArray(d.authorizations)) {
        return `${prefix} waiting for the end user to connect (${calls} call${calls === 1 ? '' : 's'})`;
      }
      return `${prefix} waiting for a person (${calls} call${calls === 1 ? '' : 's'} to answer)`;
    }
    case 'authorization-requested':
      return `${prefix} ${text(d.endUser)} must connect at ${text(d.provider)} (${text(d.reason)}): ${text(d.url)}`;
    case 'authorization-completed':
      return `${prefix} ${text(d.endUser)} connected at ${text(d.provider)}`;
    case 'budget-exceeded': {
      const spent = (d.spent ?? {}) as { tokens?: unknown; costUsd?: unknown };
      return `${prefix} budget reached: spent ${text(spent.tokens)} tokens, ${usd(Number(spent.costUsd ?? 0))}`;
    }
    case 'budget-extended': {
      const by = (d.by ?? {}) as { keyId?: string; keyName?: string };
      return `${prefix} budget extended by ${keyLabel(by.keyName, by.keyId)}`;
    }
    case 'limit-waiting':
      return `${prefix} ${text(d.tool)} waits for its limit (${text(d.limit)}) until ${text(d.until)}: the run holds no worker meanwhile`;
    case 'limit-wait-over':
      return `${prefix} the limit's window opened: the run goes on`;
    case 'result-invalid': {
      const errors = Array.isArray(d.errors) ? d.errors.map(String) : [];
      return `${prefix} answer does not match the result schema: ${shorten(errors.join('; '))}`;
    }
    case 'run-completed':
      return `${prefix} completed: ${shorten(text(d.result ?? ''), 2000)}`;
    case 'run-failed':
      return `${prefix} failed [${text(d.code)}]: ${text(d.message)}`;
    case 'run-cancelled':
      return `${prefix} cancelled`;
    default:
      return `${prefix} ${event.type} ${shorten(JSON.stringify(d))}`;
  }
}

/**
 * The API key that answered, by name and id. `bootstrap` is the name the server gives the first admin key (the
 * one `mt serve` prints, or MT_BOOTSTRAP_KEY): said so, since nobody chose that name.
 */
export function keyLabel(name: string | undefined, id: string | undefined): string {
  return name === 'bootstrap' ? `bootstrap (the first admin key, ${id})` : `${name} (${id})`;
}

/** The arguments of an approval, pretty-printed (its `argumentsJson` is JSON text). */
function prettyArguments(approval: ApprovalView): string {
  try {
    return JSON.stringify(JSON.parse(approval.argumentsJson), null, 2);
  } catch {
    return approval.argumentsJson;
  }
}

/** The call a run waits on, readably, and the exact commands that answer it. */
export function describeWaiting(run: RunView): string {
  const authorization = run.pendingAuthorization;
  if (run.status === 'PendingAuthorization' && authorization) {
    return [
      `Run ${run.id} waits for ${authorization.endUser} to connect at ${authorization.provider} (${authorization.reason}).`,
      'Hand them this link (it works once, until ' + `${authorization.linkExpiresAt}):`,
      `  ${authorization.url}`,
      'The run goes on by itself once they have connected.',
    ].join('\n');
  }
  if (run.status === 'PendingBudget') {
    return [
      `Run ${run.id} reached its budget: ${usageLine(run) ?? ''}.`,
      'Extend it to let it go on, or cancel it:',
      `  mt interaction-budget ${run.id} --tokens N   (or --cost-usd X)`,
      `  mt interaction-cancel ${run.id}`,
    ].join('\n');
  }
  if (run.status === 'PendingLimit' && run.waiting) {
    return [
      `Run ${run.id} waits for a rate limit: ${run.waiting.tool} (${run.waiting.limit}: ${run.waiting.description}).`,
      `It goes on by itself at ${run.waiting.until}, holding no worker meanwhile; cancel it with:`,
      `  mt interaction-cancel ${run.id}`,
    ].join('\n');
  }
  const approval = run.pendingApproval;
  if (!approval) return `run ${run.id} is ${run.status}`;
  const lines = [
    `Run ${run.id} waits for a person to approve this call:`,
    `  tool:      ${approval.functionName}`,
    `  agent:     ${approval.agentName ?? '-'}`,
    `  approval:  ${approval.id}`,
  ];
  // A sub-agent's call (agents as tools): the approval is its child run's; answering through this run answers it.
  if (approval.runId && approval.runId !== run.id) lines.push(`  asked by:  run ${approval.runId}, below this one`);
  if (approval.expiresAt) lines.push(`  expires:   ${approval.expiresAt}`);
  lines.push(
    '  arguments:',
    ...prettyArguments(approval)
      .split('\n')
      .map((line) => `    ${line}`),
  );
  lines.push(
    '',
    'Answer it with:',
    `  mt interaction-approve ${run.id}`,
    `  mt interaction-reject ${run.id} -r "REASON"`,
  );
  return lines.join('\n');
}

/** A run's result as a terminal shows it: its text, or its structured result as indented JSON. */
export function resultText(run: RunView): string {
  if (run.result === null) return '';
  return typeof run.result === 'string' ? run.result : JSON.stringify(run.result, null, 2);
}

/** A cost in US dollars as a terminal shows it: `$0.0123` (up to 6 decimals, trailing zeros dropped, at least 2). */
export function usd(value: number): string {
  const fixed = value.toFixed(6).replace(/0+$/, '');
  const [whole, decimals = ''] = fixed.split('.');
  return `$${whole}.${decimals.padEnd(2, '0')}`;
}

/** A run's usage as one line: `1200 in + 300 out tokens, $0.0045`, and its budget when it has one. */
export function usageLine(run: Pick<RunView, 'usage' | 'budget'>): string | null {
  if (run.usage === undefined) return null;
  const { inputTokens, outputTokens, costUsd } = run.usage;
  const spent = `${inputTokens} in + ${outputTokens} out tokens, ${usd(costUsd)}`;
  const budget = run.budget;
  if (budget == null) return spent;
  const limits = [
    ...(budget.tokens === null ? [] : [`${budget.tokens} tokens`]),
    ...(budget.costUsd === null ? [] : [usd(budget.costUsd)]),
  ].join(', ');
  return `${spent} (budget ${limits}, on exceeded: ${budget.onExceeded})`;
}

/** A run as a FIELD / VALUE table, with its answer or error below. */
export function describeRun(run: RunView): string {
  const table = formatTable(
    ['FIELD', 'VALUE'],
    [
      ['id', run.id],
      ['interaction', `${run.interaction.name} (version ${run.interaction.version})`],
      ['status', run.status],
      ['interactive', run.interactive],
      ['created', run.createdAt],
      ['updated', run.updatedAt],
      ['usage', usageLine(run)],
      ['error', run.error ? `[${run.error.code}] ${run.error.message}` : null],
      ...(run.parentRunId
        ? [['parent', `${run.parentRunId} (its agent ${run.agent ?? '?'} was handed the task)`]]
        : []),
      ...(run.origin ? [['started by', originLine(run.origin)]] : []),
    ],
  );
  const parts = [table];
  if (run.result !== null) parts.push(`\nResult:\n${resultText(run)}`);
  if (run.status === 'PendingApproval' && run.pendingApproval) parts.push(`\n${describeWaiting(run)}`);
  if (run.status === 'PendingAuthorization' && run.pendingAuthorization) parts.push(`\n${describeWaiting(run)}`);
  if (run.status === 'PendingBudget') parts.push(`\n${describeWaiting(run)}`);
  if (run.status === 'PendingLimit' && run.waiting) {
    parts.push(`\nwaiting: rate-limit ${run.waiting.limit} until ${run.waiting.until}\n${describeWaiting(run)}`);
  }
  return parts.join('\n');
}

/** What started a run no request started, in one line: the schedule's tick, the webhook's delivery, the run's end. */
export function originLine(origin: NonNullable<RunView['origin']>): string {
  const what = `${origin.kind} ${origin.name} (version ${origin.version})`;
  if (origin.kind === 'schedule') return `${what}, tick ${origin.tick ?? '?'}`;
  if (origin.runId !== undefined) return `${what}, when run ${origin.runId} ended ${origin.status ?? 'Completed'}`;
  return `${what}, delivery ${origin.eventId ?? '?'}`;
}

/** Approvals as a table: ID, RUN, TOOL, AGENT, STATUS, CREATED. */
export function approvalTable(approvals: ApprovalView[], calls: (string | undefined)[] = []): string {
  return formatTable(
    ['ID', 'RUN', 'TOOL', 'AGENT', 'STATUS', 'CREATED', 'CALL'],
    approvals.map((a, i) => [a.id, a.runId, a.functionName, a.agentName, a.status, a.createdAt, calls[i] ?? null]),
  );
}

/** The most characters of a request body `approval-list` shows beside the method and URL. */
const BODY_SHOWN = 60;

/**
 * What an approved call would do, in one short line: `POST http://host/orders/A-1001/refunds {"amount":49.9,…}`.
 * `method` and `url` are the connector's; the path parameters and query of the approval's arguments
 * (`additionalInputs`, as the model and the run's bindings gave them) are written in, and the body (`request`,
 * where the amount of a refund or a payment is) is cut to {@link BODY_SHOWN} characters. The arguments shown in an
 * approval never hold a secret (a key goes in a header the connector's auth adds), so neither does this line.
 */
export function callLine(method: string, url: string, argumentsJson: string): string {
  let args: { request?: unknown; additionalInputs?: Record<string, unknown> } = {};
  try {
    const parsed = JSON.parse(argumentsJson) as unknown;
    if (parsed && typeof parsed === 'object') args = parsed as typeof args;
  } catch {
    // Not JSON: the method and URL alone.
  }
  const inputs = args.additionalInputs && typeof args.additionalInputs === 'object' ? args.additionalInputs : {};
  let target = url;
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(inputs)) {
    const [where, name] = [key.slice(0, key.indexOf('.')), key.slice(key.indexOf('.') + 1)];
    const shown = typeof value === 'string' ? value : JSON.stringify(value);
    if (where === 'path') target = target.replaceAll(`{${name}}`, encodeURIComponent(shown));
    else if (where === 'query') query.append(name, shown);
  }
  const search = query.size > 0 ? `${target.includes('?') ? '&' : '?'}${query}` : '';
  const body = args.request === undefined ? '' : ` ${shorten(JSON.stringify(args.request), BODY_SHOWN)}`;
  return `${method} ${target}${search}${body}`;
}

/** One approval: its fields, pretty-printed arguments, and who answered. */
export function describeApproval(approval: ApprovalView): string {
  const table = formatTable(
    ['FIELD', 'VALUE'],
    [
      ['id', approval.id],
      ['run', approval.runId],
      ['tool', approval.functionName],
      ['agent', approval.agentName],
      ['status', approval.status],
      ['reason', approval.reason],
      ['edited by', approval.edited ? keyLabel(approval.edited.by.keyName, approval.edited.by.keyId) : null],
      [
        'approved by',
        approval.approvedBy?.length ? approval.approvedBy.map((by) => keyLabel(by.keyName, by.keyId)).join(', ') : null,
      ],
      ['answered by', approval.answeredBy ? keyLabel(approval.answeredBy.keyName, approval.answeredBy.keyId) : null],
      ['answered', approval.answeredAt],
      ['expires', approval.expiresAt],
      ['created', approval.createdAt],
    ],
  );
  return `${table}\n\nArguments:\n${prettyArguments(approval)}`;
}
