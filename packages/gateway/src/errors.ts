import { defineErrors } from '@maitento/errors';

/** The gateway's error codes: each is a tool result the model reads, never a thrown exception of a call. */
export const gatewayErrors = defineErrors({
  'api:limits:exceeded': {
    status: 429,
    message: '{name} was not {done}: its limit of {limit} is reached; it admits another {one} in {seconds} s',
    hint: 'Try again after that, or less often; the limit is the `limit` of the tool (or interaction) in the config repo (docs/limits.md)',
  },
  'api:gateway:arguments-invalid': {
    status: 422,
    message: 'The arguments of {tool} are not usable: {reason}',
    hint: 'Send a JSON object shaped { "request": {...}, "additionalInputs": {...} } as the tool definition shows.',
  },
  'api:gateway:argument-unknown': {
    status: 422,
    message: '{tool} has no argument {argument}. Send only the arguments its definition lists.',
  },
  'api:gateway:argument-bound': {
    status: 422,
    message: '{tool} does not accept {argument}: its value is fixed by the tool or the run. Leave it out.',
  },
  'api:gateway:request-invalid': {
    status: 422,
    message: 'The call to {tool} was not sent because its arguments do not match: {problems}',
    hint: 'Fix the listed arguments and call the tool again.',
  },
  'api:gateway:platform-unset': {
    status: 503,
    message:
      'The call of {connector} was not sent: its url {url} is a path on the platform, and this process knows no platform URL to resolve it against',
    hint: "Set MT_PUBLIC_URL to the server's URL where the server and every worker run (mt serve on a fixed port uses its own address when it is unset)",
  },
  'api:gateway:path-invalid': {
    status: 422,
    message: 'The call to {tool} was not sent: the value of path parameter {parameter} {reason}.',
  },
  'api:connections:provider-failed': {
    status: 502,
    message: 'The auth provider {provider} could not be used: {reason}',
    hint: 'Check its issuer or endpoints, its client id and secret, and that MT_EGRESS_ALLOW lets the server reach it',
  },
  'api:connections:refresh-busy': {
    status: 503,
    message:
      'The call was not sent: another process was refreshing the connection of {endUser} at {provider} and did not finish within {waitMs} ms',
    hint: 'Call again: the connection is refreshed once, by whichever process holds it; check that the auth provider answers',
  },
  'api:connections:refresh-refused': {
    status: 409,
    message:
      'The auth provider {provider} refused the refresh token of the connection ({reason}); it needs its person again',
    hint: 'Hand the end user a new connect link (POST /v1/connections/links): a run waiting for it resumes by itself',
  },
  'api:connections:authorization-required': {
    status: 409,
    message:
      'The call to {tool} was not sent: the end user {endUser} has no usable connection at {provider} ({reason})',
    hint: 'The end user connects through a connect link (POST /v1/connections/links); the run waits for it when it can',
  },
  'api:connections:end-user-missing': {
    status: 422,
    message:
      'The call to {tool} was not sent: its connector {connector} (auth = "OAuth2") acts for an end user, and none is named',
    hint: 'Start the run with endUser (the person it acts for), or call the tool in a run that names one',
  },
  'api:connections:client-secret-missing': {
    status: 422,
    message: 'The auth provider {provider} names the client secret {secret}, which this namespace does not hold',
    hint: 'Create it with mt secret-create, or deploy the provider with the secret it should use',
  },
  'api:connections:authorization-refused': {
    status: 400,
    message: 'The auth provider {provider} did not authorise the connection: {reason}',
    hint: 'Ask for a new connect link and authorise again',
  },
  'api:connections:issuer-mismatch': {
    status: 400,
    message:
      'The authorisation response does not come from the issuer of {provider} ({issuer}): it is refused (RFC 9207)',
  },
  'api:connections:callback-invalid': {
    status: 400,
    message: 'The callback for {provider} is not a valid authorisation response: {reason}',
  },
  'api:gateway:secret-not-found': {
    status: 422,
    message: 'Could not find secret {secret} for connector {connector}',
  },
  'api:gateway:schema-invalid': {
    status: 500,
    message: 'The call was not sent: the {which} schema of connector {connector} cannot be compiled ({reason}).',
    hint: 'Fix the JSON Schema in the connector and deploy it again; mt check reports what is wrong with it.',
  },
  'api:gateway:too-many-redirects': {
    status: 502,
    message: 'The endpoint of {tool} redirected more than {max} times; the call was stopped at {url}.',
  },
  'api:gateway:timeout': {
    status: 504,
    message: 'The endpoint of {tool} did not answer within {seconds} seconds.',
  },
  'api:gateway:cancelled': {
    status: 499,
    message: 'The call to {tool} was cancelled before it finished.',
  },
  'api:gateway:upstream-unreachable': {
    status: 502,
    message: 'Could not reach the endpoint of {tool} at {host}: {reason}',
  },
  'api:approvals:required': {
    status: 409,
    message:
      '{tool} needs a person to approve each call, so it is not called directly: start a run of an interaction that offers it, where a person approves the call',
    hint: 'Start a run (mt interaction-run) and answer its approval with mt interaction-approve; by hand, mt extop-call --approve makes the call with your own secret',
  },
  'api:approvals:request-changed': {
    status: 409,
    message: 'The call of {tool} would now differ from the one approved, so it was not made',
  },
  'api:gateway:internal': {
    status: 500,
    message: 'The call to {tool} failed because of an error inside Maitento; it was logged on the server.',
    hint: 'This is a bug in Maitento, not in the call: report it with the time of the call.',
  },
  'api:gateway:upstream-status': {
    status: 502,
    message: 'The endpoint of {tool} answered with HTTP status {status}.',
  },
  'api:gateway:response-invalid': {
    status: 502,
    message: 'The endpoint of {tool} answered, but its response does not match the connector schema: {problems}',
  },
  'api:gateway:response-undecodable': {
    status: 502,
    message: 'The endpoint of {tool} answered with a body that could not be decoded ({encoding}): {reason}',
  },
  'api:gateway:mcp-error': {
    status: 502,
    message: 'The MCP server of {tool} at {host} did not complete the {operation} request: {reason}',
    hint: 'Check that the server is up and speaks MCP over Streamable HTTP at that URL, and that the secret is accepted.',
  },
  'api:gateway:mcp-tool-error': {
    status: 502,
    message: 'The MCP tool {remote} behind {tool} reported an error; its text is in the body.',
  },
  'api:gateway:mcp-redirect-refused': {
    status: 502,
    message:
      'The MCP server of {tool} at {origin} redirected to {target}, another origin; it was not followed, so the credential stays with {origin}.',
    hint: 'Point the connector at the URL the server redirects to, if that server is to be trusted with the secret.',
  },
  'api:gateway:options-invalid': {
    status: 500,
    message: 'Invalid gateway options: {reason}',
  },
});

/** A code of {@link gatewayErrors}. */
export type GatewayErrorCode = ReturnType<typeof gatewayErrors.codes>[number];
