import type { QuotaStanding } from '@maitento/store';
import { h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { describe, expect, it } from 'vitest';
import { UsagePage, usagePeriod } from './usage.js';
import type { Chrome } from './views.js';

const NOW = Date.parse('2026-12-31T22:15:00.000Z');

describe('the usage page’s period', () => {
  it('is the current UTC day by default and for an unknown name', () => {
    for (const query of [{}, { period: 'week' }, { period: 'today', from: '2020-01-01' }]) {
      expect(usagePeriod(query, NOW)).toEqual({
        period: {
          name: 'today',
          since: '2026-12-31T00:00:00.000Z',
          until: '2027-01-01T00:00:00.000Z',
          from: '2026-12-31',
          to: '2026-12-31',
        },
      });
    }
  });

  it('is the current UTC month, ending at the next month’s start (across a year too)', () => {
    expect(usagePeriod({ period: 'month' }, NOW).period).toEqual({
      name: 'month',
      since: '2026-12-01T00:00:00.000Z',
      until: '2027-01-01T00:00:00.000Z',
      from: '2026-12-01',
      to: '2026-12-31',
    });
    expect(usagePeriod({ period: 'month' }, Date.parse('2028-02-10T00:00:00Z')).period.to).toBe('2028-02-29');
  });

  it('is a range of days with both ends included', () => {
    expect(usagePeriod({ period: 'range', from: '2026-11-30', to: '2026-12-02' }, NOW)).toEqual({
      period: {
        name: 'range',
        since: '2026-11-30T00:00:00.000Z',
        until: '2026-12-03T00:00:00.000Z',
        from: '2026-11-30',
        to: '2026-12-02',
      },
    });
    expect(usagePeriod({ period: 'range', from: '2026-12-05', to: '2026-12-05' }, NOW).period.until).toBe(
      '2026-12-06T00:00:00.000Z',
    );
  });

  it('refuses a range without two real days in order, keeping what was typed', () => {
    for (const [from, to] of [
      [undefined, '2026-12-01'],
      ['2026-02-30', '2026-03-01'],
      ['yesterday', '2026-12-01'],
      ['2026-12-01T10:00', '2026-12-02'],
    ]) {
      const { period, error } = usagePeriod({ period: 'range', from, to }, NOW);
      expect(error).toBe('Give the first and the last day of the range, as YYYY-MM-DD.');
      expect(period.from).toBe(from ?? '');
    }
    expect(usagePeriod({ period: 'range', from: '2026-12-02', to: '2026-12-01' }, NOW).error).toBe(
      'The last day of the range is before its first.',
    );
  });
});

const chrome: Chrome = {
  keyName: 'ops',
  namespace: 'default',
  csrfToken: 't',
  pendingCount: 0,
  current: 'usage',
  admin: true,
};

function standing(quotas: QuotaStanding['quotas'], used: QuotaStanding['used']): QuotaStanding {
  return {
    quotas,
    used,
    dayEndsAt: '2027-01-01T00:00:00.000Z',
    monthEndsAt: '2027-01-01T00:00:00.000Z',
    secondsToDayEnd: 6300,
    secondsToMonthEnd: 6300,
  };
}

function render(s: QuotaStanding): string {
  const { period } = usagePeriod({}, NOW);
  return renderToString(h(UsagePage, { chrome, period, keyNames: new Map(), standing: s }));
}

describe('the usage page’s quota bars', () => {
  it('write the figure beside each bar, say when a quota is reached, and draw no bar without a quota', () => {
    const html = render(
      standing(
        { runsPerDay: 10, toolCallsPerDay: 4, tokensPerMonth: null },
        { runsToday: 3, toolCallsToday: 5, tokensThisMonth: 12_345 },
      ),
    );
    expect(html).toContain('<span class="bar-text">3 of 10 runs (30 %)</span>');
    expect(html).toContain('<span class="bar-text">5 of 4 tool calls (125 %), quota reached</span>');
    expect(html).toContain('<span class="bar-text">12,345 tokens; no quota</span>');
    // The bar of a reached quota is full and of the failure colour; its length never passes the track's.
    expect(html).toMatch(/id="quota-tool-calls"[\s\S]*?<rect class="c-Failed" x="0" y="0" width="100"/);
    expect(html).toMatch(/id="quota-runs"[\s\S]*?<rect class="c-value" x="0" y="0" width="30"/);
    expect(html).not.toMatch(/id="quota-tokens"[\s\S]*?<svg/);
    // The bars are pictures of the text beside them: hidden from assistive technologies.
    expect(html.match(/<svg [^>]*aria-hidden="true"/g)).toHaveLength(2);
  });

  it('shows a quota of 0 as reached', () => {
    const html = render(
      standing(
        { runsPerDay: 0, toolCallsPerDay: null, tokensPerMonth: null },
        { runsToday: 0, toolCallsToday: 0, tokensThisMonth: 0 },
      ),
    );
    expect(html).toContain('<span class="bar-text">0 of 0 runs (0 %), quota reached</span>');
  });
});
