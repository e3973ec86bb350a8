import { describe, expect, it, vi } from 'vitest';
import type { Io } from '../src/internal/output.js';
import { runUntilSignal } from '../src/internal/until-signal.js';

// `mt serve` and `mt worker` print a ready line that tests and supervisors wait for, then signal.
describe('runUntilSignal', () => {
  it('handles SIGTERM before it writes the ready lines, then stops cleanly on it', async () => {
    const lines: string[] = [];
    const before = process.listenerCount('SIGTERM');
    let closed = false;
    const io: Io = {
      out: () => {},
      err: (line: string) => {
        lines.push(`${line} [SIGTERM handlers: ${process.listenerCount('SIGTERM') - before}]`);
      },
    };
    const close = async () => {
      closed = true;
    };
    const running = runUntilSignal(io, { close }, ['listening on http://127.0.0.1:1']);
    expect(lines).toEqual(['listening on http://127.0.0.1:1 [SIGTERM handlers: 1]']);
    process.emit('SIGTERM', 'SIGTERM');
    await running;
    expect(closed).toBe(true);
    expect(lines.slice(1)).toEqual(['SIGTERM: stopping [SIGTERM handlers: 0]', 'stopped [SIGTERM handlers: 0]']);
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });

  it('passes the signal to a shutdown, and exits with 1 once its grace passed while it still hangs', async () => {
    const lines: string[] = [];
    const io: Io = { out: () => {}, err: (line: string) => lines.push(line) };
    const signals: NodeJS.Signals[] = [];
    // A shutdown that never ends (a connection that hangs past every deadline).
    const shutdown = (signal: NodeJS.Signals) => {
      signals.push(signal);
      return new Promise<void>(() => {});
    };
    const exited = new Promise<number | undefined>((resolve) => {
      vi.spyOn(process, 'exit').mockImplementationOnce((code) => {
        resolve(code as number | undefined);
        return undefined as never;
      });
    });
    const begin = performance.now();
    void runUntilSignal(io, { close: async () => {}, shutdown, graceMs: 200 }, ['ready']);
    process.emit('SIGINT', 'SIGINT');
    expect(await exited).toBe(1);
    expect(performance.now() - begin).toBeGreaterThanOrEqual(190);
    expect(signals).toEqual(['SIGINT']);
    expect(lines).toEqual(['ready', 'SIGINT: stopping', 'shutdown grace of 200 ms passed: exiting now']);
    vi.restoreAllMocks();
  });
});
