import { createHash } from 'node:crypto';

/** What a person approves of one call: everything sent except what is attached after approval. */
export interface HashedRequest {
  method: string;
  url: URL;
  /** The headers without the credential (a secret or a platform token is attached after approval). */
  headers: Readonly<Record<string, string>>;
  body?: string;
  /** The call's identity (for a run: run id, model turn and call index), the source of its Idempotency-Key. */
  identity: string | undefined;
}

/**
 * The approval hash of a call: sha256 of the JSON of [method, URL with query, non-secret headers (lower-cased,
 * sorted), body, identity]. A secret header or a fresh platform token is not in it, so an approved call still
 * matches when its token is new; the identity is, so an approval covers one call and never a later one.
 */
export function requestHash(request: HashedRequest, credentialHeader: string | undefined): string {
  const skip = credentialHeader?.toLowerCase();
  const headers = Object.entries(request.headers)
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .filter(([name]) => name !== skip)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const fields = [request.method, request.url.href, headers, request.body ?? null, request.identity ?? null];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}
