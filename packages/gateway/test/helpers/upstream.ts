import type { ServerResponse } from 'node:http';

// The gateway tests' upstreams are testkit's `startRecordingUpstream`; this is their one answer helper.

/** Answers with JSON. */
export function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}
