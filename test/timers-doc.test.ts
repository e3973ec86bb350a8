import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as store from '@maitento/store';
import { describe, expect, it } from 'vitest';
import * as queue from '../packages/engine/src/worker/queue.js';
import * as runLimit from '../packages/engine/src/worker/run-limit.js';

// docs/architecture.md's "Timers" table against the code: each row's period is its constant's value, each file it
// names exists, and every file of the server's and worker's packages that starts a `setInterval` has a row.
const ROOT = new URL('../', import.meta.url).pathname;
// The pg-boss options of engine/src/worker/queue.ts are literals there, not constants: these rows are checked against
// the literals of that file instead.
const PG_BOSS_OPTIONS: Record<string, string> = {
  'pg-boss maintenance (queue.ts)': 'maintenanceIntervalSeconds',
  'pg-boss queue cache (queue.ts)': 'queueCacheIntervalSeconds',
  'pg-boss migrations poll (queue.ts)': 'bamIntervalSeconds',
};

interface Row {
  loop: string;
  where: string;
  periodMs: number;
  constant: string;
}

function timersTable(): Row[] {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf('\n## Timers\n');
  expect(start, 'docs/architecture.md has a "## Timers" section').toBeGreaterThan(0);
  const end = doc.indexOf('\n## ', start + 1);
  const lines = doc
    .slice(start, end === -1 ? undefined : end)
    .split('\n')
    .filter((line) => line.startsWith('|'));
  // The header and the separator first.
  return lines.slice(2).map((line) => {
    const cells = line
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim());
    expect(cells, line).toHaveLength(6);
    return { loop: cells[0], where: cells[1], periodMs: period(cells[2]), constant: cells[5] };
  });
}

function period(text: string): number {
  const match = /^([0-9.]+) (ms|s|h)$/.exec(text);
  if (match === null) throw new Error(`not a period: ${text}`);
  return Number(match[1]) * { ms: 1, s: 1000, h: 3_600_000 }[match[2] as 'ms' | 's' | 'h'];
}

// The exported numbers a row's expression may name.
const named: Record<string, unknown> = { ...store, ...queue, ...runLimit };

/** Evaluates `A * 1000 / B`-like expressions of exported constants. */
function evaluate(expression: string): number {
  const arithmetic = expression.replace(/[A-Z][A-Z0-9_]*/g, (name) => {
    const value = named[name];
    if (typeof value !== 'number') throw new Error(`${name} is not an exported number`);
    return String(value);
  });
  if (!/^[0-9.+\-*/() ]+$/.test(arithmetic)) throw new Error(`not arithmetic: ${expression}`);
  return Function(`return (${arithmetic});`)() as number;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('the timer table of docs/architecture.md', () => {
  const rows = timersTable();

  it('gives each loop the period of its constant', () => {
    expect(rows.length).toBeGreaterThan(10);
    for (const row of rows) {
      const option = PG_BOSS_OPTIONS[row.loop];
      if (option !== undefined) {
        expect(row.constant, row.loop).toBe('—');
        const source = readFileSync(join(ROOT, 'packages/engine/src/worker/queue.ts'), 'utf8');
        const literal = new RegExp(`${option}: ([0-9_]+)`).exec(source);
        expect(literal, `${option} in queue.ts`).not.toBeNull();
        expect(Number(literal![1].replaceAll('_', '')) * 1000, row.loop).toBe(row.periodMs);
        continue;
      }
      const expression = /^`([^`]+)`$/.exec(row.constant)?.[1];
      expect(expression, `${row.loop}: a constant`).toBeDefined();
      expect(Math.abs(evaluate(expression!) - row.periodMs), `${row.loop}: ${expression}`).toBeLessThan(1);
    }
  });

  it('names files that exist, and every file with a setInterval of the server and the worker has a row', () => {
    const named = new Set<string>();
    for (const row of rows) {
      const file = /`([a-z]+\/src\/[^`]+\.ts)`/.exec(row.where)?.[1];
      expect(file, `${row.loop}: a file`).toBeDefined();
      expect(statSync(join(ROOT, 'packages', file!)).isFile()).toBe(true);
      named.add(file!);
    }
    for (const pkg of ['store', 'engine', 'server']) {
      for (const path of sourceFiles(join(ROOT, 'packages', pkg, 'src'))) {
        if (!readFileSync(path, 'utf8').includes('setInterval(')) continue;
        const file = path.slice(join(ROOT, 'packages').length + 1);
        expect(named, `${file} starts a setInterval: give it a row in docs/architecture.md "Timers"`).toContain(file);
      }
    }
  });
});
