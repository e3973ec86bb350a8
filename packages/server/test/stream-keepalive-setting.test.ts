// MT_STREAM_KEEPALIVE_MS: how long a run event stream may stay silent before the server writes a keep-alive comment.
import { afterEach, describe, expect, it } from 'vitest';
import { streamKeepAliveMsFromEnv } from '../src/server/settings.js';
import { DEFAULT_STREAM_TIMING } from '../src/streams/event-stream.js';

const saved = process.env.MT_STREAM_KEEPALIVE_MS;
afterEach(() => {
  if (saved === undefined) delete process.env.MT_STREAM_KEEPALIVE_MS;
  else process.env.MT_STREAM_KEEPALIVE_MS = saved;
});

describe('MT_STREAM_KEEPALIVE_MS', () => {
  it('is 15 s when unset or empty, the given milliseconds when set, and the default when not a whole number of at least 100', () => {
    delete process.env.MT_STREAM_KEEPALIVE_MS;
    expect(streamKeepAliveMsFromEnv()).toBe(15_000);
    expect(DEFAULT_STREAM_TIMING.keepAliveMs).toBe(15_000);
    process.env.MT_STREAM_KEEPALIVE_MS = '';
    expect(streamKeepAliveMsFromEnv()).toBe(15_000);
    process.env.MT_STREAM_KEEPALIVE_MS = '1000';
    expect(streamKeepAliveMsFromEnv()).toBe(1000);
    for (const bad of ['50', '1.5', 'soon', '-1']) {
      process.env.MT_STREAM_KEEPALIVE_MS = bad;
      expect(streamKeepAliveMsFromEnv()).toBe(15_000);
    }
  });
});
