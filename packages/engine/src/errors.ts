import { defineErrors } from '@maitento/errors';

/** Errors of runs, models and approvals. */
export const engineErrors = defineErrors({
  'api:interactions:not-found': {
    status: 404,
    message: 'No interaction {name}{version} in this namespace{suggestion}',
  },
  'api:interactions:input-required': {
    status: 422,
    message: 'Input {name} is required: {what}',
    hint: 'Give it with `--input {name}=VALUE` (CLI) or in `inputs` of the request',
  },
  'api:interactions:input-invalid': { status: 422, message: '{detail}' },
  'api:interactions:input-unknown': {
    status: 422,
    message: 'Interaction {interaction} has no input named {name}{suggestion}',
    hint: 'Its inputs: {known}',
  },
  'api:interactions:pin-missing': {
    status: 500,
    message: 'Interaction {name} version {version} pins {kind} {pin} version {pinVersion}, which is not stored',
  },
  'api:runs:not-found': { status: 404, message: 'No run {id} in this namespace' },
  'api:runs:input-too-large': {
    status: 413,
    message: "The run's inputs are {size} bytes of JSON; at most {max} are accepted",
    hint: 'Pass large data by reference (an id the tool can fetch); MT_RUN_INPUT_MAX_BYTES sets the limit',
  },
  'api:runs:already-ended': { status: 409, message: 'Run {id} has already ended ({status})' },
  'api:runs:too-many-steps': {
    status: 422,
    message: 'The run took more than {max} model turns without a final answer',
    hint: 'Raise MT_MAX_STEPS, or make the agent’s instructions lead to an answer sooner',
  },
  'api:runs:result-invalid': {
    status: 422,
    message: "The model's answer did not match the interaction's result schema twice: {detail}",
    hint: "The run's events hold each answer and its errors; make the agent's instructions describe the shape",
  },
  'api:runs:message-empty': { status: 422, message: 'The message is empty; send some text' },
  'api:runs:not-waiting-for-input': {
    status: 409,
    message: 'Run {id} is not waiting for a message (status {status}){why}',
    hint: 'Send a message once the run is WaitingForInput: after each reply of a conversation interaction',
  },
  'api:runs:not-waiting': {
    status: 409,
    message: 'Run {id} is not waiting for an approval (status {status})',
  },
  'api:runs:budget-exceeded': {
    status: 422,
    message: 'The run reached its budget ({limit}): it spent {spent}',
    hint: "Raise the interaction's budget, or start the run with a larger one (budget in the start request)",
  },
  'api:runs:ancestor-budget-exceeded': {
    status: 422,
    message: 'The budget of run {run} ({limit}), which this run works for, is reached: its runs spent {spent}',
    hint: 'A run’s budget covers the runs its agents hand tasks to; extend the budget of run {run} or give it a larger one',
  },
  'api:runs:not-waiting-for-budget': {
    status: 409,
    message: 'Run {id} is not waiting for its budget to be extended (status {status})',
    hint: 'A budget is extended while the run is PendingBudget: after it reached its budget with onExceeded = "wait"',
  },
  'api:runs:budget-too-small': {
    status: 422,
    message: 'The new budget ({limit}) is not above what the run spent ({spent}); the run would stop again at once',
    hint: 'Give a limit above what it spent, or cancel the run',
  },
  'api:runs:invalid-cursor': { status: 422, message: 'The cursor {cursor} is not one this API gave out' },
  'api:runs:worker-unsupported': {
    status: 500,
    message:
      'A worker alone needs PostgreSQL (DATABASE_URL); an embedded (PGlite) database runs its worker in `mt serve`',
  },
  'api:models:unknown-provider': {
    status: 422,
    message: 'Model {model} names an unknown provider {provider}; known: {known}',
    hint: 'Write the model as provider:name, for example openai:gpt-4o-mini',
  },
  'api:models:not-configured': {
    status: 500,
    message: 'Provider {provider} is not configured: {missing} is not set',
    hint: 'Set {missing} in the environment of the worker',
  },
  'api:models:prices-invalid': {
    status: 500,
    message: 'MT_MODEL_PRICES is not a usable price table: {detail}',
    hint: 'Write a JSON object (or the path of a file holding one) like {"openai:gpt-4o": {"input": 2.5, "output": 10}}: USD per million tokens',
  },
  'api:models:unreachable': { status: 502, message: 'Model {model} could not be reached: {detail}' },
  'api:models:error': { status: 502, message: 'Model {model} answered with status {status}: {detail}' },
  'api:models:invalid-response': {
    status: 502,
    message: 'Model {model} gave an answer that could not be read: {detail}',
  },
  'api:approvals:not-found': { status: 404, message: 'No approval {id} in this namespace' },
  'api:approvals:already-answered': {
    status: 409,
    message: 'Approval {id} has already been answered ({status})',
  },
  'api:approvals:closed': {
    status: 409,
    message: 'Approval {id} was never answered, and no longer can be{why}',
    hint: 'Start the run again to make the call; `mt run-list` shows how runs ended',
  },
  'api:approvals:role-forbidden': {
    status: 403,
    message: 'A {role} key may not answer an approval',
    hint: 'Answer with an approver, user or admin key (docs/roles.md); a runner key starts runs and never answers them',
  },
  'api:approvals:not-an-approver': {
    status: 403,
    message: 'Tool {tool} names who may answer its approvals ({approvers}); this {role} key {keyId} is not one of them',
    hint: "Answer with a key the tool's approval.approvers names (docs/roles.md)",
  },
  'api:approvals:starter-excluded': {
    status: 403,
    message: 'Tool {tool} needs someone other than the key that started the run ({keyId}) to answer its approvals',
    hint: 'Ask another person to answer it (approval.excludeStarter = true)',
  },
  'api:approvals:same-approver': {
    status: 409,
    message: 'Key {keyId} has already approved {id}; tool {tool} needs {count} distinct approvers',
    hint: 'Ask another approver to approve it',
  },
  'api:approvals:reason-required': {
    status: 422,
    message: 'A rejection needs a reason: the model is told it, to redraft the call',
  },
  'api:approvals:not-pending-for-run': {
    status: 409,
    message: 'Approval {id} is not the one run {runId} waits on',
  },
  'api:approvals:expired': {
    status: 409,
    message: 'Approval {id} expired at {expiresAt} before it was answered; the run has failed',
    hint: 'Start the run again; MT_APPROVAL_TTL sets how long an approval waits',
  },
  'api:connections:authorization-expired': {
    status: 409,
    message: 'Run {id} waited for its end user to connect their account past MT_APPROVAL_TTL; the run has failed',
    hint: 'Start the run again once the person has connected (POST /v1/connections/links); MT_APPROVAL_TTL sets how long a run waits',
  },
  'api:connections:link-failed': {
    status: 500,
    message:
      'The call of {tool} was NOT made: its end user {endUser} must connect at {provider}, and making their connect link failed with an error inside Maitento ({reason}); the run has failed',
    hint: 'This is a bug or a broken stored resource, not the call: check the auth provider (mt auth-provider-list) and report the error with the run id',
  },
  'api:approvals:no-one-to-ask': {
    status: 409,
    message:
      'Tool {tool} needs a person’s approval before each call, and this app run has nobody to ask; the call was not made',
  },
  'api:approvals:rejected': {
    status: 409,
    message: 'The call of {tool} was NOT made: a person rejected it. Their reason: {reason}',
  },
  'api:runs:call-outcome-unknown': {
    status: 409,
    message:
      'The call of {tool} was started but its outcome is unknown: the worker making it stopped before its result was stored, and a call without an idempotency key is not made twice. It was NOT made again; check whether it took effect before calling it again',
    hint: 'An MCP tools/call carries no idempotency key; look at the remote system to learn whether the call happened',
  },
  'api:approvals:edit-not-allowed': {
    status: 422,
    message:
      'The edit of approval {id} was refused: {problem} An approver changes only the arguments the model may set (never a value fixed by the tool or the run, nor a secret)',
    hint: "Edit only the fields of the approval's argumentsJson that the model chose (request fields and additionalInputs its tool definition lists)",
  },
  'api:approvals:edit-invalid': {
    status: 422,
    message: 'The edited arguments of {tool} do not fit its request schema, so nothing was approved: {problems}',
    hint: 'Fix the listed arguments and approve again',
  },
  'api:approvals:edit-stale': {
    status: 409,
    message:
      'Approval {id} no longer covers the request you saw (hash {seen}): it was edited meanwhile, so nothing was approved',
    hint: 'Read the approval again (its argumentsJson and requestHash), then answer it',
  },
  'api:approvals:edit-hash-required': {
    status: 422,
    message:
      'An edit of approval {id} needs the requestHash of the request you saw, so a stale view cannot approve another call',
    hint: 'Send the requestHash the approval showed you (GET /v1/approvals/ID) with the arguments',
  },
  'api:approvals:edit-outside-run': {
    status: 409,
    message:
      "Approval {id} covers a call an MCP client made outside a run: its arguments are the client's, not a model's in a run, and cannot be edited",
    hint: 'Approve it as it is, or reject it with a reason; the client may call again with other arguments',
  },
  'api:approvals:already-used': {
    status: 409,
    message: 'Approval {id} was already used by the call it covers, so the call of {tool} was not made again',
  },
  'api:calls:key-deleted': {
    status: 409,
    message:
      'The API key {keyId} on whose behalf {tool} was to be called was deleted meanwhile, so the call was not made',
    hint: 'Start the run (or make the call) again with a key that exists',
  },
  'api:telemetry:protocol-unsupported': {
    status: 500,
    message:
      'OTEL_EXPORTER_OTLP_PROTOCOL is {protocol}: Maitento exports OTLP over HTTP only (http/protobuf or http/json)',
    hint: 'Set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf and point the endpoint at the collector’s HTTP port (4318)',
  },
  'api:triggers:too-deep': {
    status: 409,
    message:
      "The chained run was not started: it would be {depth} runs deep (each run a trigger starts on another run's end is one deeper), and at most {max} may be nested",
    hint: 'A chain of triggers that loops (A starts B, B starts A) stops here; MT_RUN_MAX_DEPTH sets the limit (default 3), shared with agents handing tasks to agents',
  },
  'api:runs:too-deep': {
    status: 422,
    message:
      'The agent {agent} was not handed the task: this run is {depth} agents deep already, and at most {max} may be nested',
    hint: 'MT_RUN_MAX_DEPTH sets how deep agents may hand tasks to agents (default 3)',
  },
  'api:runs:sub-agent-ended': {
    status: 422,
    message: 'The agent {agent} gave no answer: its run {runId} {how}',
  },
  'api:runs:unknown-tool': {
    status: 422,
    message: 'There is no tool named {name}{suggestion}; the tools are: {known}',
  },
});

/** A code of the engine's registry. */
export type EngineErrorCode = ReturnType<typeof engineErrors.codes>[number];
