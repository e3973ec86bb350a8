import type { Interaction, Tool } from './resources.js';
import type { Reporter } from './report.js';
import { keySpanOf, spanOf, type ValueTree } from './value-tree.js';

/**
 * A tool's or a connector's limit (docs/limits.md) caps calls per window (`calls` with `per`), calls in flight
 * (`inFlight`), or both, in whole numbers. The window's form is checked by its shape (kind-shapes.ts). An interaction's
 * limit on starting runs (`of` "starts") has only `perKey` and `perEndUser`, each `calls` with `per` (no `inFlight`:
 * its shape has none).
 */
export function checkLimit(
  limit: Tool['limit'] | Interaction['limit'],
  tree: ValueTree,
  reporter: Reporter,
  of: 'calls' | 'starts' = 'calls',
): void {
  if (limit === undefined) return;
  checkCounts(limit, ['limit'], tree, reporter, of);
  if (limit.perKey !== undefined) checkCounts(limit.perKey, ['limit', 'perKey'], tree, reporter, of);
  if (limit.perEndUser !== undefined) checkCounts(limit.perEndUser, ['limit', 'perEndUser'], tree, reporter, of);
}

type Counts = { calls?: number; per?: string; inFlight?: number; perKey?: unknown; perEndUser?: unknown };

// The counts at `at` (`limit`, `limit.perKey`, `limit.perEndUser`): whole numbers, calls with per; the top limit may
// hold only per-key or per-end-user counts.
function checkCounts(limit: Counts, at: string[], tree: ValueTree, reporter: Reporter, of: 'calls' | 'starts'): void {
  const name = at.join('.');
  const wrong = (key: string, expected: string, actual: string, path: string[]) =>
    reporter.report('mtr:property:type', { key, expected, actual }, tree.file, spanOf(tree, path));
  for (const key of ['calls', 'inFlight'] as const) {
    const value = limit[key];
    if (value !== undefined && !(Number.isInteger(value) && value >= 1 && value <= 1_000_000)) {
      wrong(`${name}.${key}`, 'a whole number from 1 to 1000000', String(value), [...at, key]);
    }
  }
  if (limit.calls !== undefined && limit.per === undefined) {
    wrong(`${name}.per`, `the window of ${name}.calls, such as "1m"`, 'nothing', [...at, 'calls']);
  }
  if (limit.per !== undefined && limit.calls === undefined) {
    wrong(`${name}.calls`, `how many calls ${name}.per admits, such as 10`, 'nothing', [...at, 'per']);
  }
  const scoped = limit.perKey !== undefined || limit.perEndUser !== undefined;
  if (limit.calls === undefined && limit.inFlight === undefined && !scoped) {
    reporter.report(
      'mtr:property:type',
      {
        key: name,
        expected:
          of === 'starts'
            ? at.length === 1
              ? 'perKey, perEndUser or both'
              : 'calls with per'
            : at.length === 1
              ? 'calls with per, inFlight, perKey or perEndUser'
              : 'calls with per, inFlight, or both',
        actual: 'neither',
      },
      tree.file,
      keySpanOf(tree, at),
    );
  }
}
