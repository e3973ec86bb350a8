import { createServer, type Server } from 'node:http';
import { isMtError } from '@maitento/errors';
import { MaitentoError, Maitento, NotFoundError, sdkErrors } from '@maitento/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The SDK's errors do not extend @maitento/errors' MtError (the SDK has no dependency on it), yet the CLI
// and the server's helpers still recognise them, with their code, status and hint.
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'No run abc', code: 'api:runs:not-found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('SDK errors', () => {
  it('are MtErrors to isMtError, keeping the server code and status', async () => {
    const mt = new Maitento({ baseUrl: url, apiKey: 'mt_x' });
    const error = await mt.interactionRuns.get('abc').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toBeInstanceOf(MaitentoError);
    expect(isMtError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'api:runs:not-found', status: 404, message: 'No run abc' });
  });

  it("are MtErrors for the SDK's own codes, with their hint", () => {
    const error = sdkErrors.create('api:sdk:invalid-argument', { value: '".."' });
    expect(isMtError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'api:sdk:invalid-argument', status: 400 });
    expect(error.hint).toMatch(/may not be empty/);
    expect(JSON.stringify(error)).toBe(
      JSON.stringify({ error: 'path parameter ".." is not a valid path segment', code: 'api:sdk:invalid-argument' }),
    );
  });

  it('are not confused with plain errors that happen to have a code', () => {
    expect(isMtError(Object.assign(new Error('x'), { code: 'ECONNREFUSED', status: 1 }))).toBe(false);
  });
});
