export { gatewayErrors } from './errors.js';
export type { GatewayErrorCode } from './errors.js';
export { callInputOf, credentialOf, runBindingsOf } from './gateway/call-input.js';
export type { CallParts, CallRunInputs, ConnectionTokenReader, SecretReader } from './gateway/call-input.js';
export { createGateway } from './gateway/create-gateway.js';
export { gatewayDefaults } from './gateway/options.js';
export { isPreparedRequest } from './gateway/types.js';
export type {
  ApprovalUse,
  CallCredential,
  Gateway,
  GatewayOptions,
  McpListOptions,
  McpToolInfo,
  PlatformTokenContext,
  PreparedRequest,
  PreparedRequestView,
  RunBindingValue,
  ToolCallInput,
  ToolCallResult,
} from './gateway/types.js';
export { toolResultText } from './steps/shape-result.js';
export { SECRET_MASK } from './steps/redact.js';
export { encodePathSegment, pathValueProblem } from './steps/build-url.js';
export { describeErrors, validatorFor } from './internal/validators.js';
export { createOAuthClient, OAUTH_REQUEST_TIMEOUT_MS } from './oauth/oauth-client.js';
export type { AuthorizationStart, GrantedTokens, OAuthClient, RegisteredClient } from './oauth/oauth-client.js';
