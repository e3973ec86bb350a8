import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadMigrations } from '@maitento/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { commitBefore, type PreviousRelease, preparePreviousRelease } from './helpers/previous-release.js';
import { type ServeProcess, startServe } from './helpers/processes.js';
import { type RunsStack, startRunsStack } from './helpers/stack.js';
import { runMt } from './support/harness.js';

// A rolling upgrade with the real previous release (issue #48; docs/operations.md "Upgrades", docs/testing.md "The
// previous release"): the release just before this one's newest migration, built from git history
// (helpers/previous-release.ts), migrates a fresh database to its own schema and serves it with two `mt serve`
// (each with its worker). Under a 60 s load (runs started, each making a tool call to a real upstream on 127.0.0.1
// through the fake model; run lists and runs read; spread over every server in service), this release's `mt migrate`
// applies its expand step, this release's `mt serve` starts beside the previous ones, and one previous server is
// restarted (SIGTERM, started again) on the migrated schema. No request fails and every run completes.

/** The newest migration of this release, and whether a release before it may run on it (an expand step). */
const newest = loadMigrations().at(-1)!;
const expand = newest.compatibleFrom < newest.version;
const newestFile = `packages/store/sql/${newest.name}`;
/** The slow part, bounded: the previous release's preparation (archive, node_modules, build; reused once made). */
const PREPARE_MS = 360_000;
const LOAD_MS = 60_000;

let previous: PreviousRelease;
let previousKnown: number;
let stack: RunsStack;

beforeAll(async () => {
  if (!expand) return;
  previous = await preparePreviousRelease(await commitBefore(newestFile), {
    buildMs: PREPARE_MS / 2,
    installMs: PREPARE_MS / 2,
  });
  previousKnown = Math.max(
    ...readdirSync(join(previous.dir, 'packages/store/sql'))
      .filter((f) => /^\d{4}_.*\.sql$/.test(f))
      .map((f) => Number(f.slice(0, 4))),
  );
  stack = await startRunsStack({ servers: 2, mt: previous.mt });
}, PREPARE_MS + 150_000);

afterAll(async () => {
  await stack?.close();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function migrations(url: string): Promise<{ version: number; compatible_from: number | null }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT version, compatible_from FROM mt_migrations ORDER BY version')).rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(!expand)(
  `a rolling upgrade from the release before ${newest.name} (an expand step: compatible-from ${newest.compatibleFrom})`,
  { timeout: LOAD_MS + 240_000 },
  () => {
    it('the previous release migrated a fresh database to its own schema and serves it', async () => {
      expect(previousKnown).toBeLessThan(newest.version);
      // Expand steps only between the two: the previous release may run on what this one applies.
      for (const m of loadMigrations().filter((m) => m.version > previousKnown))
        expect(m.compatibleFrom, m.name).toBeLessThanOrEqual(previousKnown);
      const rows = await migrations(stack.db!.url);
      expect(rows.at(-1)?.version).toBe(previousKnown);
      // Its own source, not this release's: it knows none of this release's newer migrations.
      expect(existsSync(join(previous.dir, newestFile))).toBe(false);
    });

    it('both releases serve one database through the expand migration for 60 s, the previous one restarts after it, no request fails', async () => {
      const [a, b] = stack.servers;
      // The servers in service, as a load balancer sees them: one leaves before it is stopped, a process joins once it
      // listens.
      let pool: ServeProcess[] = [a, b];
      const failures: string[] = [];
      const started: string[] = [];
      const counts = { reads: 0, starts: 0 };
      let loading = true;
      const send = async (i: number, path: string, init: RequestInit = {}): Promise<string | undefined> => {
        const server = pool[i % pool.length];
        try {
          const res = await fetch(`${server.url}${path}`, {
            ...init,
            headers: { authorization: `Bearer ${stack.adminKey}`, ...init.headers },
            signal: AbortSignal.timeout(15_000),
          });
          const text = await res.text();
          if (res.status >= 400)
            failures.push(`${init.method ?? 'GET'} ${path} on ${server.url}: ${res.status} ${text}`);
          else return text;
        } catch (error) {
          failures.push(`${init.method ?? 'GET'} ${path} on ${server.url}: ${String(error)}`);
        }
        return undefined;
      };
      // Bounded in count and time: three readers every 25 ms (the run list, then a run started so far), a run started
      // every 500 ms (each a model turn, a tool call to the upstream and a final answer), for 60 s.
      const reader = async (n: number) => {
        for (let i = n; loading && i < 10_000; i += 3) {
          const id = started[i % Math.max(1, started.length)];
          if (await send(i, i % 2 === 0 || id === undefined ? '/v1/runs?limit=5' : `/v1/runs/${id}`)) counts.reads += 1;
          await pause(25);
        }
      };
      const starter = async () => {
        for (let i = 0; loading && i < 200; i += 1) {
          const text = await send(i, '/v1/interactions/weather/runs', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ inputs: { place: 'London' } }),
          });
          if (text) {
            started.push((JSON.parse(text) as { id: string }).id);
            counts.starts += 1;
          }
          await pause(500);
        }
      };
      const began = Date.now();
      const load = Promise.all([reader(0), reader(1), reader(2), starter()]);
      const steps: string[] = [];
      const step = (what: string) => steps.push(`${((Date.now() - began) / 1000).toFixed(1)} s ${what}`);
      try {
        await pause(5_000);
        // This release's `mt migrate`, as the database's owner, while the previous release serves.
        const migrated = await runMt(['migrate', '--database-url', stack.db!.url], { home: stack.home });
        expect(migrated.code, migrated.stderr).toBe(0);
        const applied = loadMigrations()
          .filter((m) => m.version > previousKnown)
          .map((m) => m.version);
        expect(migrated.stdout).toContain(`applied migrations ${applied.join(', ')}`);
        step(`mt migrate applied ${applied.join(', ')}`);
        await pause(3_000);
        // This release's `mt serve` beside the previous release's two.
        const next = await startServe(stack.home, stack.env);
        stack.servers.push(next);
        pool = [a, b, next];
        step('this release serves');
        await pause(5_000);
        // The previous release restarts on the migrated schema (a crash loop, a rollback, a node drained): out of the
        // pool, SIGTERM, started again, back in.
        pool = [b, next];
        await pause(300);
        await a.stop();
        step('the previous release stopped');
        const again = await startServe(stack.home, stack.env, [], previous.mt);
        stack.servers[0] = again;
        pool = [again, b, next];
        step('the previous release started again');
        await pause(Math.max(0, LOAD_MS - (Date.now() - began)));
      } finally {
        loading = false;
        await load;
      }
      step(`load ended: ${counts.reads} reads, ${counts.starts} runs started`);
      console.log(
        `rolling upgrade from ${previous.commit.slice(0, 10)} (${previous.modules}):\n  ${steps.join('\n  ')}`,
      );
      expect(failures).toEqual([]);
      expect(Date.now() - began).toBeGreaterThanOrEqual(LOAD_MS);
      expect(counts.reads).toBeGreaterThan(500);
      expect(counts.starts).toBeGreaterThan(40);
      // Every run started during the upgrade completed, its tool call answered (the weather of London).
      const client = api(stack.servers[2].url, stack.adminKey);
      for (const id of started) {
        const run = await client.waitForEnd(id, 60_000);
        expect(run.status, JSON.stringify(run)).toBe('Completed');
        expect(run.result).toContain('21.5');
      }
      const weatherCalls = stack.upstream.requests.filter((r) => r.url.startsWith('/v1/forecast'));
      expect(weatherCalls.length).toBeGreaterThanOrEqual(started.length);
      // The schema is this release's, each migration recording the level a release must know.
      const rows = await migrations(stack.db!.url);
      expect(rows.filter((r) => r.version > previousKnown)).toEqual(
        loadMigrations()
          .filter((m) => m.version > previousKnown)
          .map((m) => ({ version: m.version, compatible_from: m.compatibleFrom })),
      );
    });
  },
);
