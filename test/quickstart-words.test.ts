import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRunPrinter } from '../scripts/quickstart/show-run.js';

// issue #22, item 7: the demo's "Approved by bootstrap" says what bootstrap is.
afterEach(() => vi.restoreAllMocks());

function printed(by: unknown): string {
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  createRunPrinter({}).print({ seq: 1, type: 'approval-answered', data: { decision: 'approve', by } });
  vi.restoreAllMocks();
  return out.join('');
}

describe('the demo names who approved', () => {
  it('says that bootstrap is the first admin key', () => {
    expect(printed({ keyId: 'k1', keyName: 'bootstrap' })).toContain(
      "Approved by bootstrap (the name of the first admin key, made at the server's first start): the exact call shown is made now.",
    );
  });

  it('names any other key as it is', () => {
    expect(printed({ keyId: 'k2', keyName: 'back-office' })).toContain('Approved by back-office: the exact call');
  });
});
