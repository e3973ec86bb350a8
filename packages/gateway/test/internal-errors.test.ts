import { once } from 'node:events';
import { createServer } from 'node:net';
import { createEgressPolicy } from '@maitento/egress';
import { createGateway } from '@maitento/gateway';
import type { Connector, Tool } from '@maitento/lang';
import { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';

const policy = createEgressPolicy({ allow: '127.0.0.1/32' });

function connector(url: string, auth: Connector['auth'] = 'None'): Connector {
  return {
    kind: 'connector',
    name: 'c',
    method: 'GET',
    url,
    description: 'test',
    parameters: { path: [], query: [] },
    schema: {},
    auth,
  };
}

const tool: Tool = {
  kind: 'tool',
  name: 'get-thing',
  connector: 'c',
  guidance: 'test',
  bindings: { request: {}, query: {}, path: {} },
  requiresApproval: false,
};

// A dispatcher with a bug in it: what an unexpected failure inside Maitento looks like to the gateway.
class BuggyDispatcher extends Dispatcher {
  dispatch(): boolean {
    const missing = undefined as unknown as { field: string };
    return missing.field.length > 0;
  }
}

async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

describe('an unexpected error inside the gateway', () => {
  it('is api:gateway:internal, handed with its stack to onInternalError, and shows the caller no stack', async () => {
    const seen: { error: unknown; tool: string }[] = [];
    const gateway = createGateway({
      policy,
      dispatcher: new BuggyDispatcher(),
      onInternalError: (error, context) => seen.push({ error, tool: context.tool }),
    });
    try {
      const result = await gateway.call({ tool, connector: connector('http://127.0.0.1:9/thing'), arguments: {} });
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:internal' });
      expect(result.error).toContain('get-thing');
      expect(result.error).not.toMatch(/TypeError|undefined|\bat |\.ts|\.js|field/);
      expect(seen).toHaveLength(1);
      expect(seen[0].tool).toBe('get-thing');
      expect(seen[0].error).toBeInstanceOf(TypeError);
      expect((seen[0].error as Error).stack).toContain('BuggyDispatcher');
    } finally {
      await gateway.close();
    }
  });

  it('covers a failed assertion in a platform token callback too', async () => {
    const seen: unknown[] = [];
    const gateway = createGateway({
      policy,
      platform: {
        origin: 'http://127.0.0.1:9',
        token: async () => {
          throw new Error('assertion failed: a platform call needs the namespace it is made for');
        },
      },
      onInternalError: (error) => seen.push(error),
    });
    try {
      const result = await gateway.call({
        tool,
        connector: connector('http://127.0.0.1:9/api', 'Maitento'),
        arguments: {},
      });
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:internal' });
      expect(result.error).not.toContain('assertion');
      expect(seen).toHaveLength(1);
    } finally {
      await gateway.close();
    }
  });

  it('without onInternalError still answers api:gateway:internal', async () => {
    const gateway = createGateway({ policy, dispatcher: new BuggyDispatcher() });
    try {
      const result = await gateway.call({ tool, connector: connector('http://127.0.0.1:9/thing'), arguments: {} });
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:internal' });
    } finally {
      await gateway.close();
    }
  });
});

describe('a network error', () => {
  it('stays api:gateway:upstream-unreachable (a refused connection), and is not reported as internal', async () => {
    const seen: unknown[] = [];
    const gateway = createGateway({ policy, onInternalError: (error) => seen.push(error) });
    try {
      const port = await closedPort();
      const result = await gateway.call({ tool, connector: connector(`http://127.0.0.1:${port}/x`), arguments: {} });
      expect(result).toMatchObject({ ok: false, code: 'api:gateway:upstream-unreachable' });
      expect(result.error).toContain('ECONNREFUSED');
      expect(seen).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});

describe('what counts as a network error', () => {
  // A dispatcher that fails the way a transport, or a programming mistake, does: by the error's code.
  class FailingDispatcher extends Dispatcher {
    constructor(private readonly code: string) {
      super();
    }
    dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const error = Object.assign(new Error(`failed with ${this.code}`), { code: this.code });
      queueMicrotask(() => handler.onResponseError?.({} as Dispatcher.DispatchController, error));
      return true;
    }
  }

  it.each([
    ['ECONNRESET', 'api:gateway:upstream-unreachable'],
    ['EAI_AGAIN', 'api:gateway:upstream-unreachable'],
    ['UND_ERR_SOCKET', 'api:gateway:upstream-unreachable'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'api:gateway:upstream-unreachable'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'api:gateway:upstream-unreachable'],
    ['HPE_INVALID_CONSTANT', 'api:gateway:upstream-unreachable'],
    ['ERR_INVALID_ARG_TYPE', 'api:gateway:internal'],
    ['UND_ERR_INVALID_ARG', 'api:gateway:internal'],
    ['SOMETHING_ELSE', 'api:gateway:internal'],
  ])('%s is %s', async (code, expected) => {
    const gateway = createGateway({ policy, dispatcher: new FailingDispatcher(code), onInternalError: () => {} });
    try {
      const result = await gateway.call({ tool, connector: connector('http://127.0.0.1:9/thing'), arguments: {} });
      expect(result.code).toBe(expected);
    } finally {
      await gateway.close();
    }
  });
});
