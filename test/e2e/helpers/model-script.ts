import {
  createFakeAnthropic,
  createFakeOpenAI,
  type FakeModelRequest,
  type FakeModelServer,
  type FakeTurn,
} from '@maitento/testkit';

/** A fake model that plays the flows of the runs repo, chosen by the tools it is offered and the task. */
export interface ScenarioModel {
  server: FakeModelServer;
  /** Lets the model answer the runs whose task holds `[gate:NAME]`. */
  open(name: string): void;
  /** Resolves once a run whose task holds `[gate:NAME]` has asked the model (and waits at the gate). */
  reached(name: string): Promise<void>;
}

/** The refund the model asks for first, and its redraft after a rejection. */
export const FIRST_REFUND = { amount: 40, reason: 'The lamp arrived broken' };
export const REDRAFTED_REFUND = { amount: 25, reason: 'The lamp arrived broken (partial refund)' };

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Where the places of the weather tests are; each run's upstream call can be told apart by its latitude. */
export const PLACES: Record<string, [number, number]> = {
  London: [51.5, -0.13],
  Paris: [48.85, 2.35],
  Berlin: [52.52, 13.4],
  Oslo: [59.91, 10.75],
  Rome: [41.9, 12.5],
  Lisbon: [38.72, -9.14],
  Madrid: [40.42, -3.7],
  Vienna: [48.21, 16.37],
};

function placeCoordinates(task: string): [number, number] {
  const place = Object.keys(PLACES).find((p) => task.includes(p));
  return place ? PLACES[place] : [0.5, 0.5];
}

/** What the scripted model answers to one request of the runs repo's flows. */
export function scenarioTurn(request: FakeModelRequest): FakeTurn {
  const c = request.conversation;
  const task = c.userTexts.join('\n');
  const failure = /\[fail:([\w-]+)\]/.exec(task)?.[1];
  if (failure === '500') return { fail: 'status', status: 500, message: 'the model is overloaded' };
  if (failure === 'garbage') return { fail: 'invalid-json' };
  if (failure === 'wrong-shape') return { fail: 'wrong-shape' };
  const tools = new Set(c.tools.map((t) => t.name));
  const results = c.toolResults;
  const last = results.at(-1);
  if (tools.has('current-weather')) {
    if (results.length === 0) {
      const [latitude, longitude] = placeCoordinates(task);
      const additionalInputs = { 'query.latitude': latitude, 'query.longitude': longitude };
      return { toolCalls: [{ name: 'current-weather', arguments: { additionalInputs } }] };
    }
    return { text: `Weather report: ${last?.content}` };
  }
  if (tools.has('create-ticket')) {
    if (results.length === 0)
      return { toolCalls: [{ name: 'create-ticket', arguments: { request: { subject: 'Broken lamp' } } }] };
    return { text: `Ticket opened: ${last?.content}` };
  }
  if (tools.has('get-order')) {
    const orderId = /\b([A-Z]-\d+)\b/.exec(task)?.[1] ?? 'A-1001';
    if (results.length === 0) {
      return { toolCalls: [{ name: 'get-order', arguments: { additionalInputs: { 'path.orderId': orderId } } }] };
    }
    if (!/refund/i.test(task)) return { text: `Order status: ${last?.content}` };
    const refunds = results.filter((r) => r.toolName === 'refund-order');
    const refund = (body: { amount: number; reason: string }) => ({
      toolCalls: [
        { name: 'refund-order', arguments: { request: body, additionalInputs: { 'path.orderId': orderId } } },
      ],
    });
    if (refunds.length === 0) return refund(FIRST_REFUND);
    const answer = refunds.at(-1)?.content ?? '';
    if (answer.includes('R-77')) return { text: `Refund done: ${answer}` };
    if (refunds.length === 1) return refund(REDRAFTED_REFUND);
    return { text: `No refund was made: ${answer}` };
  }
  return { text: `No scenario for tools ${[...tools].join(', ')}` };
}

/** Starts a fake model of `provider` playing {@link scenarioTurn}, with gates the test opens. */
export async function startScenarioModel(provider: 'openai' | 'anthropic'): Promise<ScenarioModel> {
  const gates = new Map<string, { open: ReturnType<typeof deferred>; reached: ReturnType<typeof deferred> }>();
  const gate = (name: string) => {
    let g = gates.get(name);
    if (!g) {
      g = { open: deferred(), reached: deferred() };
      gates.set(name, g);
    }
    return g;
  };
  const respond = async (request: FakeModelRequest): Promise<FakeTurn> => {
    const name = /\[gate:([\w-]+)\]/.exec(request.conversation.userTexts.join('\n'))?.[1];
    if (name && request.conversation.toolResults.length === 0) {
      gate(name).reached.resolve();
      await gate(name).open.promise;
    }
    return scenarioTurn(request);
  };
  const server = provider === 'openai' ? await createFakeOpenAI({ respond }) : await createFakeAnthropic({ respond });
  return {
    server,
    open: (name) => gate(name).open.resolve(),
    reached: (name) => gate(name).reached.promise,
  };
}
