import type { Engine } from '@maitento/engine';

/**
 * An engine made on first use. A server without a worker only needs the engine (and its job queue)
 * once a run route is called, so a server that never sees one starts and closes without it.
 */
export function lazyEngine(make: () => Promise<Engine>): Engine {
  let made: Promise<Engine> | undefined;
  const get = () => {
    made ??= make().catch((error: unknown) => {
      // A failed start is tried again by the next request instead of failing every later one.
      made = undefined;
      throw error;
    });
    return made;
  };
  return {
    startRun: async (...args) => (await get()).startRun(...args),
    getRun: async (...args) => (await get()).getRun(...args),
    listRuns: async (...args) => (await get()).listRuns(...args),
    listEvents: async (...args) => (await get()).listEvents(...args),
    watchRun: async (...args) => (await get()).watchRun(...args),
    cancelRun: async (...args) => (await get()).cancelRun(...args),
    extendBudget: async (...args) => (await get()).extendBudget(...args),
    sendMessage: async (...args) => (await get()).sendMessage(...args),
    answerRunApproval: async (...args) => (await get()).answerRunApproval(...args),
    answerApproval: async (...args) => (await get()).answerApproval(...args),
    getApproval: async (...args) => (await get()).getApproval(...args),
    listApprovals: async (...args) => (await get()).listApprovals(...args),
    connectionMade: async (...args) => (await get()).connectionMade(...args),
    async close() {
      const engine = await made?.catch(() => undefined);
      await engine?.close();
    },
  };
}
