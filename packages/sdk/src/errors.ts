import { SdkErrorRegistry } from './core/error-registry.js';

/**
 * The SDK's own error codes: failures that happen on the client side, before or instead of a
 * server answer. Errors the server answers with keep the server's code.
 */
export const sdkErrors = new SdkErrorRegistry({
  'api:sdk:connection-failed': {
    status: 503,
    message: 'could not connect to {url}: {reason}',
    hint: 'check the server URL and that the server is running',
  },
  'api:sdk:timeout': {
    status: 504,
    message: 'no answer from {url} within {timeoutMs} ms',
    hint: 'the server may be overloaded; raise timeoutMs or try again',
  },
  'api:sdk:invalid-argument': {
    status: 400,
    message: 'path parameter {value} is not a valid path segment',
    hint: 'names and ids may not be empty, "." or ".."',
  },
  'api:sdk:unexpected-response': {
    status: 502,
    message: '{method} {url} answered {status} without a Maitento error body',
    hint: 'is the URL a Maitento server? A proxy in between may have answered instead',
  },
});

/** A code of {@link sdkErrors}. */
export type SdkErrorCode = ReturnType<typeof sdkErrors.codes>[number];
