import { defineErrors } from '@maitento/errors';

/** Errors of the REST server itself: requests, authentication and refused deploys. */
export const serverErrors = defineErrors({
  'api:request:invalid': { status: 400, message: '{detail}' },
  'api:hooks:not-found': {
    status: 404,
    message: 'No trigger {name} with an enabled version in namespace {namespace}',
    hint: 'The URL is /v1/hooks/<namespace>/<trigger>, the trigger deployed from triggers/<trigger>.mtr',
  },
  'api:hooks:signature-invalid': {
    status: 401,
    message: "The delivery is not signed with the trigger's secret: {detail}",
    hint: 'Sign it as the {style} style says, with the secret the trigger names',
  },
  'api:hooks:timestamp-stale': {
    status: 401,
    message: "The delivery's signed timestamp is outside the tolerance: {detail}",
    hint: 'Send it again with a fresh timestamp and signature (a replayed old delivery is refused)',
  },
  'api:hooks:too-large': {
    status: 413,
    message: 'The delivery is {size} bytes; trigger {name} takes at most {max}',
    hint: 'Send a smaller payload, or raise maxBodyBytes in triggers/{name}.mtr (at most 1048576)',
  },
  'api:hooks:body-invalid': {
    status: 400,
    message: 'The delivery is not a JSON document: {detail}',
    hint: 'Send the payload as JSON',
  },
  'api:hooks:event-id-missing': {
    status: 400,
    message: 'The delivery carries no event id ({where})',
    hint: 'Send the id the style gives, or set eventId = "/<pointer>" in the trigger to read it from the payload',
  },
  'api:hooks:inputs-refused': {
    status: 422,
    message: 'The delivery was refused: {detail}',
    hint: "Fix the payload or the trigger's mapping (inputs, defaults); the delivery log has the same message",
  },
  'api:triggers:inputs-refused': {
    status: 422,
    message: 'The run was not started: {detail}',
    hint: "The ended run did not give what the interaction needs: fix the trigger's mapping (pointers, defaults); the delivery log has the same message",
  },
  'api:triggers:start-refused': {
    status: 409,
    message: 'The run was not started: {detail}',
    hint: "The trigger's interaction version could not start a run (disabled, deleted since); deploy it again",
  },
  'api:schedules:not-found': {
    status: 404,
    message: 'No schedule {name} with an enabled version in this namespace{suggestion}',
    hint: 'List them with GET /v1/schedules (mt schedule-list); a schedule is deployed from schedules/<name>.mtr',
  },
  'api:auth-providers:version-disabled': {
    status: 409,
    message: 'Version {version} of auth provider {name} is disabled; no connect link is made with it',
    hint: 'Enable it with POST /v1/auth-providers/{name}/versions/{version}/enable, or deploy a new version',
  },
  'api:connections:no-public-url': {
    status: 409,
    message: 'This server has no public URL, so no auth provider can send an end user back to it',
    hint: 'Set MT_PUBLIC_URL to the address people reach this server at; register MT_PUBLIC_URL + /v1/connections/callback as the redirect URI at the provider',
  },
  'api:connections:return-url-invalid': {
    status: 400,
    message: 'returnUrl {url} is not an http or https URL',
  },
  'api:connections:redirect-mismatch': {
    status: 400,
    message: 'This callback did not come to the redirect URI its connect link was made for ({expected})',
    hint: 'Open the connect link on the server that made it, or make a new link since MT_PUBLIC_URL changed',
  },
  'api:webhooks:url-refused': {
    status: 422,
    message: 'The webhook URL {url} is refused: {reason}',
    hint: 'Give a public http or https URL; a private address only when MT_EGRESS_ALLOW lets it through (as for tools)',
  },
  'api:metrics:port-invalid': {
    status: 400,
    message: 'MT_METRICS_PORT {value} is not a port (a whole number from 0 to 65535)',
    hint: 'set MT_METRICS_PORT to the port Prometheus scrapes (for example 9464), or leave it unset for no metrics',
  },
  'api:health:port-invalid': {
    status: 400,
    message: 'MT_WORKER_HEALTH_PORT {value} is not a port (a whole number from 0 to 65535)',
    hint: 'set MT_WORKER_HEALTH_PORT to the port the orchestrator probes (for example 8081), or leave it unset for none',
  },
  'api:request:not-found': { status: 404, message: 'No route {method} {url}' },
  'api:request:method-not-allowed': {
    status: 405,
    message: 'No route {method} {url}; this path takes {allow}',
    hint: 'Use one of the methods in the Allow header',
  },
  'api:request:too-large': { status: 413, message: 'The request body is larger than {limit} bytes' },
  'api:request:unsupported-media-type': {
    status: 415,
    message: 'Unsupported content type {type}',
    hint: 'Send JSON with Content-Type: application/json',
  },
  'api:request:in-progress': {
    status: 409,
    message: 'A request with this Idempotency-Key is still being handled; retry later',
  },
  'api:request:idempotency-key-reused': {
    status: 422,
    message: 'This Idempotency-Key was already used for another request',
    hint: 'Use a new Idempotency-Key for each new request; only a retry of the same request repeats its key',
  },
  'api:auth:missing-key': {
    status: 401,
    message: 'An API key is required: send Authorization: Bearer <key>',
    hint: 'Set MT_API_KEY, or run `mt login`',
  },
  'api:auth:invalid-key': { status: 401, message: 'The API key is not valid; it may have been deleted' },
  'api:auth:forbidden': {
    status: 403,
    message: 'This key may not {action}: it needs the {role} role',
    hint: 'Use an admin key of this namespace',
  },
  'api:console:signed-out': {
    status: 401,
    message: 'Sign in to the console first: this session has ended or never began',
    hint: 'Open /console/login and sign in with an API key',
  },
  'api:console:csrf-invalid': {
    status: 403,
    message: "The form did not carry this session's CSRF token; nothing was changed",
    hint: 'Reload the page and send the form again',
  },
  'api:console:origin-refused': {
    status: 403,
    message: 'A console form may only be posted from the console itself (Origin {origin}); nothing was changed',
  },
  'api:console:too-many-sign-ins': {
    status: 429,
    message: 'More than {max} sign-in tries in a minute from this address; wait a minute',
  },
  'api:console:sso-failed': {
    status: 401,
    message: 'The sign-in at {provider} did not complete: {reason}',
    hint: 'Open /console/login and sign in again',
  },
  'api:console:sso-unavailable': {
    status: 502,
    message: 'The identity provider {issuer} could not be reached: {reason}',
    hint: 'Try again in a moment, or sign in with an API key',
  },
  'api:console:no-role': {
    status: 403,
    message:
      'You are signed in at {provider} as {person}, but no value of your {claim} claim gives you a role in the console',
    hint: 'Ask an administrator to map one of your groups to a role (MT_OIDC_ROLES)',
  },
  'api:console:reason-invalid': {
    status: 400,
    message: 'A rejection needs a reason of 1 to {max} characters (this one has {length})',
  },
  'api:console:request-changed': {
    status: 409,
    message: 'The call of approval {id} is not the one this page showed; nothing was answered',
    hint: 'Reload the approval and read the call again',
  },
  'api:deploy:model-not-configured': {
    status: 422,
    message:
      'The agent {agent} uses the model {model}, but this server has no {missing}: its runs will fail with api:models:not-configured until it is set',
    hint: 'Set {missing} where mt serve and every mt worker run, then restart them; or write model = "scripted:{agent}" to try it without a model key',
  },
  'api:deploy:invalid': {
    status: 422,
    message: 'The config repo has {count} error(s); nothing was deployed',
    hint: 'Run `mt check` to see them with their positions',
  },
  'api:deploy:mcp-unlisted': {
    status: 502,
    message:
      'The MCP server of connector {connector} ({file}) at {url} could not be listed [{code}]: {reason}; nothing was deployed',
    hint: 'Check that the server is up, that its address is public (or allowed by MT_EGRESS_ALLOW), and the secret of the tools on it',
  },
  'api:deploy:mcp-not-connected': {
    status: 409,
    message:
      'The MCP server of connector {connector} ({file}) requires OAuth2, and {endUser} has no usable connection at {provider} to list it with ({reason}); nothing was deployed',
    hint: 'Have that person connect (mt connection-link {provider} --user ID), or name another end user with mt deploy --end-user ID; deploy without --end-user to keep the schema read before',
  },
  'api:deploy:mcp-schema-unread': {
    status: 422,
    message:
      'The MCP connector {connector} requires OAuth2 and its server was not listed ({why}): its tool takes any JSON object until a deploy reads the input schema',
    hint: '{fix}',
  },
  'api:deploy:mcp-tool-missing': {
    status: 422,
    message:
      'The MCP server of connector {connector} ({file}) at {url} has no tool {tool}{suggestion}; it has: {known}. Nothing was deployed',
  },
  'api:agents:not-found': { status: 404, message: 'No agent {name}{version} in this namespace{suggestion}' },
  // api:interactions:not-found is the engine's (engineErrors): a code is defined once.
  'api:approvals:person-required': {
    status: 403,
    message: "An approval is answered with a person's API key, not with a platform token (a tool call of an agent)",
    hint: 'Answer it with `mt interaction-approve`, `mt approval-approve` or an API key of the namespace',
  },
  'api:mcp:session-not-found': {
    status: 404,
    message: 'No MCP session {id} at {endpoint}; it has ended or belongs to another endpoint',
    hint: 'Start a new session: send an initialize request without Mcp-Session-Id',
  },
  'api:mcp:session-required': {
    status: 400,
    message: 'An MCP request without Mcp-Session-Id must be an initialize request',
  },
  'api:mcp:session-key-mismatch': {
    status: 403,
    message: 'MCP session {id} was opened with another API key; a session is used only with the key that opened it',
    hint: 'Open a session of your own (initialize) with this key',
  },
  'api:mcp:approval-pending': {
    status: 202,
    message:
      'The call of {tool} was NOT made yet: it waits for a person to answer approval {id}. Answer it with `mt approval-approve {id}` or `mt approval-reject {id} --reason ...` (or POST /v1/approvals/{id}/approve, /reject); then call {tool} again with the same arguments to get the outcome',
  },
  'api:mcp:approval-expired': {
    status: 409,
    message: 'The call of {tool} was NOT made: approval {id} expired at {expiresAt} before the call used it',
    hint: 'Call the tool again to ask again; MT_APPROVAL_TTL (default 1 hour over MCP) sets how long an approval is valid',
  },
  'api:mcp:approval-used': {
    status: 409,
    message:
      'The call of {tool} was NOT made by this request: approval {id} was already used by another call with the same arguments',
    hint: 'Call the tool again to ask a person again',
  },
  'api:mcp:authorization-declined': {
    status: 409,
    message:
      'The call of {tool} was NOT made: the person was asked to connect their account at {provider} (end user {endUser}) and the MCP client answered {action}',
    hint: 'Call the tool again when the person wants to connect; nothing was sent and no connection was stored',
  },
  'api:mcp:too-many-sessions': {
    status: 429,
    message: 'This API key already has {max} MCP sessions open; no more are opened for it',
    hint: 'End a session (DELETE with its Mcp-Session-Id) or let it idle out (MT_MCP_SESSION_IDLE); MT_MCP_SESSIONS_PER_KEY sets the limit',
  },
  'api:runs:too-many-streams': {
    status: 429,
    message: 'This API key already has {max} run event streams open; no more are opened for it',
    hint: 'Close a stream you no longer read; MT_RUN_STREAMS_PER_KEY sets the limit',
  },
  'api:knowledge:unsupported-type': {
    status: 415,
    message: 'A document is sent as text/plain, text/markdown, text/html or application/pdf, not {type}',
    hint: 'Set Content-Type to the type of the file (`mt kb-add` does it from the file name)',
  },
  'api:knowledge:unreadable': {
    status: 422,
    message: 'Document {name} could not be read as {type}: {reason}; nothing was stored',
    hint: 'Check that the file is what its Content-Type says (a PDF that opens, UTF-8 text)',
  },
  'api:knowledge:empty': {
    status: 422,
    message: 'Document {name} holds no text; nothing was stored',
    hint: 'A PDF of scanned pages has no text layer: run it through OCR first',
  },
  'api:knowledge:document-too-complex': {
    status: 422,
    message: 'Document {name} is over the budget of reading one document: {reason}; nothing was stored',
    hint: 'Split the document into smaller ones; an operator raises the budget with MT_KB_EXTRACT_TIMEOUT, MT_KB_EXTRACT_MEMORY, MT_KB_EXTRACT_PAGES and MT_KB_EXTRACT_TEXT',
  },
  'api:server:internal': { status: 500, message: 'Internal server error' },
  'api:server:migrate-invalid': {
    status: 500,
    message: 'MT_MIGRATE is {value}; it is on or off',
    hint: 'Leave it unset (on: every process migrates at start) or set off where `mt migrate` runs before the release (docs/operations.md, "Upgrades")',
  },
  'api:server:oidc-invalid': {
    status: 500,
    message: 'The single sign-on settings (MT_OIDC_*) are not usable: {reason}',
    hint: 'Fix the setting named (docs/sso.md), or unset MT_OIDC_ISSUER for sign-in with API keys only',
  },
  'api:server:trust-proxy-invalid': {
    status: 500,
    message: 'MT_TRUST_PROXY={value} is not usable: {reason}',
    hint: 'Set it to true, or to the addresses or CIDR ranges of your reverse proxies (for example 10.0.0.0/8,127.0.0.1)',
  },
});
