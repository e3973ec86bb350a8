import { describe, expect, it } from 'vitest';
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
});
