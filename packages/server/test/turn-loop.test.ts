import { createPgDb, type Db, notifyWake, openWakeups, type Wakeups } from '@maitento/store';
import { createTestDatabase, startTcpProxy, type TestDatabase } from '@maitento/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTurnLoop, type TurnLoop } from '../src/server/turn-loop.js';

// The loop that the scheduler, the chaining triggers and the embedding worker turn (src/server/turn-loop.ts), woken by real wake-ups on
// PostgreSQL: a wake-up starts a turn now, or right after the one under way; turns never overlap; a turn's wait holds
// until a wake-up; with the wake-ups lost (the LISTEN connection frozen behind a TCP proxy) no wait is longer than
// the fallback poll; a failed turn is logged and tried again; close waits for the turn under way and ends the loop.
let database: TestDatabase;
let db: Db;
const opened: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  database = await createTestDatabase('mt_turn_loop', { migrated: true });
  db = createPgDb(database.url);
});

afterAll(async () => {
  for (const item of opened.reverse()) await item.close();
  await db?.close();
  await database?.drop();
});

async function wakeups(url = database.url): Promise<Wakeups> {
  const made = await openWakeups(db, { url, pingMs: 100, deadlineMs: 300, retryMs: 100 });
  opened.push(made);
  return made;
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A loop whose turns are counted, each answering `wait()`, with the most turns ever at once. */
function countedLoop(w: Wakeups | undefined, topic: string, wait: () => number | undefined, pollMs = 10_000) {
  const state = { turns: 0, atOnce: 0, most: 0, gate: undefined as Promise<void> | undefined };
  const loop: TurnLoop = startTurnLoop({
    async turn() {
      state.turns += 1;
      state.atOnce += 1;
      state.most = Math.max(state.most, state.atOnce);
      try {
        await state.gate;
        return wait();
      } finally {
        state.atOnce -= 1;
      }
    },
    wakeups: w,
    topic,
    pollMs,
    failed: 'a turn failed',
  });
  opened.push(loop);
  return { loop, state };
}

describe('the turn loop', () => {
  it('turns at once, then waits for a wake-up; one between turns starts a turn now', async () => {
    const w = await wakeups();
    const { loop, state } = countedLoop(w, 'loop-a', () => undefined);
    await until(() => state.turns === 1, 2_000, 'the first turn');
    await sleep(300);
    expect(state.turns).toBe(1);
    await db.transaction((tx) => notifyWake(tx, 'loop-a'));
    await until(() => state.turns === 2, 2_000, 'a turn on the wake-up');
    // Another topic's wake-up is not its own.
    await db.transaction((tx) => notifyWake(tx, 'loop-other'));
    await sleep(300);
    expect(state.turns).toBe(2);
    // Woken in this process (a route that stored work) as by its topic.
    loop.wake();
    await until(() => state.turns === 3, 2_000, 'a turn on wake()');
  });

  it('a wake-up during a turn makes one more turn right after it, never two at once', async () => {
    const w = await wakeups();
    const { state } = countedLoop(w, 'loop-b', () => undefined);
    await until(() => state.turns === 1, 2_000, 'the first turn');
    let release = () => {};
    state.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    await db.transaction((tx) => notifyWake(tx, 'loop-b'));
    await until(() => state.turns === 2, 2_000, 'the woken turn');
    // Three wake-ups while that turn is held: one more turn after it, not three, and none beside it.
    for (let i = 0; i < 3; i++) await db.transaction((tx) => notifyWake(tx, 'loop-b'));
    await sleep(300);
    expect(state.turns).toBe(2);
    state.gate = undefined;
    release();
    await until(() => state.turns === 3, 2_000, 'the turn after the held one');
    await sleep(300);
    expect(state.turns).toBe(3);
    expect(state.most).toBe(1);
  });

  it('turns again after the wait a turn answers', async () => {
    const w = await wakeups();
    const { state } = countedLoop(w, 'loop-c', () => 100);
    await until(() => state.turns >= 4, 3_000, 'four turns 100 ms apart');
  });

  it('with the wake-ups lost, a long wait is cut to the fallback poll', async () => {
    const proxy = await startTcpProxy();
    opened.push(proxy);
    const w = await wakeups(proxy.via(database.url));
    expect(w.listening).toBe(true);
    // Each turn asks for a minute while wake-ups listen, for the fallback poll while they do not (as the scheduler's
    // and the chainer's turns do).
    const { state } = countedLoop(w, 'loop-d', () => (w.listening ? 60_000 : 200), 200);
    await until(() => state.turns === 1, 2_000, 'the first turn');
    proxy.freeze();
    await until(() => !w.listening, 3_000, 'the wake-ups lost');
    // Within the fallback poll of the loss, not the minute: then every 200 ms while they stay lost.
    await until(() => state.turns >= 3, 2_000, 'turns while the wake-ups are lost');
    proxy.thaw();
    await until(() => w.listening, 5_000, 'the wake-ups back');
  });

  it('a failed turn is logged and tried again after the fallback poll; close waits for the turn under way', async () => {
    const warned: string[] = [];
    let turns = 0;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let ended = false;
    const loop = startTurnLoop({
      async turn() {
        turns += 1;
        if (turns <= 2) throw new Error(`turn ${turns} broke`);
        await held;
        ended = true;
        return 0;
      },
      topic: 'loop-e',
      pollMs: 100,
      logger: {
        info() {},
        error() {},
        warn: (obj: object, msg?: string) => warned.push(`${msg}: ${(obj as { err: string }).err}`),
      },
      failed: 'a turn failed',
    });
    await until(() => turns === 3, 2_000, 'two failed turns and a third');
    expect(warned).toEqual(['a turn failed: turn 1 broke', 'a turn failed: turn 2 broke']);
    const closing = loop.close();
    let closed = false;
    void closing.then(() => {
      closed = true;
    });
    await sleep(100);
    expect(closed).toBe(false);
    release();
    await closing;
    expect(ended).toBe(true);
    // A turn answered a wait of 0: none follows the close.
    await sleep(200);
    expect(turns).toBe(3);
  });
});
