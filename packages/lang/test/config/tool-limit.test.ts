import { describe, expect, it } from 'vitest';
import { compile, refundConnector, where } from './helpers.js';

// A tool's rate limit and concurrency cap (docs/limits.md): read into the tool's content only when written, checked.
const files = (tool: string) => ({
  'connectors/open-api/refund.mtr': refundConnector,
  'external-operations/open-api/refund.mtr': `connector = @ref("refund")\nguidance = "g"\n${tool}`,
});

describe('tool limits', () => {
  it('reads calls, per, inFlight and onLimit into the tool (so into its version)', () => {
    const repo = compile(files('limit = { calls = 10 per = "1m" inFlight = 2 onLimit = "fail" }\n'));
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.tools[0]?.limit).toEqual({ calls: 10, per: '1m', inFlight: 2, onLimit: 'fail' });
  });

  it('leaves a tool without a limit as it was (no limit property, so the same version hash)', () => {
    expect(compile(files('')).tools[0]).not.toHaveProperty('limit');
  });

  it('reads perKey and perEndUser counts (docs/limits.md), alone or with the limit for every caller', () => {
    const repo = compile(
      files('limit = { calls = 10 per = "1m" perKey = { calls = 2 per = "1m" } perEndUser = { inFlight = 1 } }\n'),
    );
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.tools[0]?.limit).toEqual({
      calls: 10,
      per: '1m',
      perKey: { calls: 2, per: '1m' },
      perEndUser: { inFlight: 1 },
    });
    const alone = compile(files('limit.perKey = { calls = 1 per = "1h" }\n'));
    expect(where(alone.diagnostics)).toEqual([]);
    expect(alone.tools[0]?.limit).toEqual({ perKey: { calls: 1, per: '1h' } });
  });

  it('checks perKey and perEndUser like the limit: calls with per, whole numbers, not empty', () => {
    const bad = (tool: string) => compile(files(tool)).diagnostics;
    const noPer = bad('limit.perKey = { calls = 1 }\n');
    expect(where(noPer)).toHaveLength(1);
    expect(noPer[0]?.message).toContain('limit.perKey.per');
    expect(where(bad('limit.perEndUser = { inFlight = 0 }\n'))).toHaveLength(1);
    expect(where(bad('limit.perEndUser = { per = "2 minutes" calls = 1 }\n'))).toHaveLength(1);
    expect(where(bad('limit.perKey = {}\n'))).toHaveLength(1);
  });

  it('accepts a concurrency cap alone', () => {
    const repo = compile(files('limit.inFlight = 2\n'));
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.tools[0]?.limit).toEqual({ inFlight: 2 });
  });

  it('refuses a window that is not a duration, calls without per, a fraction, an unknown onLimit, an empty limit', () => {
    const bad = (tool: string) => compile(files(tool)).diagnostics;
    const perBad = bad('limit = { calls = 10 per = "1 minute" }\n');
    expect(where(perBad)).toEqual(['external-operations/open-api/refund.mtr:3:28 mtr:property:value']);
    expect(perBad[0]?.message).toContain('"5s", "1m" or "1h"');
    expect(where(bad('limit = { per = "25h" calls = 1 }\n'))).toHaveLength(1);
    const noPer = bad('limit.calls = 10\n');
    expect(where(noPer)).toHaveLength(1);
    expect(noPer[0]?.message).toContain('limit.per');
    expect(where(bad('limit = { inFlight = 1.5 }\n'))).toHaveLength(1);
    expect(where(bad('limit = { inFlight = 0 }\n'))).toHaveLength(1);
    expect(where(bad('limit = { inFlight = 2 onLimit = "queue" }\n'))).toHaveLength(1);
    expect(where(bad('limit = { onLimit = "fail" }\n'))).toHaveLength(1);
  });
});

describe('connector limits', () => {
  const connector = (limit: string) => ({
    'connectors/open-api/refund.mtr': `${refundConnector}${limit}`,
    'external-operations/open-api/refund.mtr': 'connector = @ref("refund")\nguidance = "g"\n',
  });

  it("reads a limit on the connector (its origin) into the connector, and checks it like a tool's", () => {
    const repo = compile(connector('limit = { calls = 100 per = "1m" inFlight = 4 }\n'));
    expect(where(repo.diagnostics)).toEqual([]);
    expect(repo.connectors[0]?.limit).toEqual({ calls: 100, per: '1m', inFlight: 4 });
    expect(compile(connector('')).connectors[0]).not.toHaveProperty('limit');
    expect(where(compile(connector('limit.calls = 10\n')).diagnostics)).toHaveLength(1);
  });
});
