import { defineErrors } from '@maitento/errors';

/** The gateway's error codes: each is a tool result the model reads, never a thrown exception of a call. */
export const gatewayErrors = defineErrors({
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
  'api:gateway:path-invalid': {
    status: 422,
    message: 'The call to {tool} was not sent: the value of path parameter {parameter} {reason}.',
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
