import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slow files, longest first (docs/performance.md at 3251c0c, "The test suite's order and isolation"). Only the order
 * matters: the longest files start first, so a run does not end with one worker still on a minute-long file while
 * the other has nothing left. Its sources: the quiet whole runs of docs/performance.md at 3251c0c for the first ones
 * (tutorials 62 s, telemetry 58 s, the console 45 s, remote 30 s on the merged tree; deploy-chain, installed and
 * runs-cli ~32 s with two workers, runs-recovery, mcp-connector-recovery, sub-agents-recovery and durability 20-24 s
 * one at a time), then the order of test/'s files in a loaded run of them (`--project processes`, 2 December
 * 12:03-12:15 UTC: those that took 20 s or more there). A file not listed (or renamed: test/sequencer.test.ts fails
 * then) comes after these, in vitest's own order (its cached duration from an earlier run, else its size).
 */
export const SLOW_FILES: readonly string[] = [
  'test/tutorials.test.ts',
  'test/e2e/telemetry.test.ts',
  'test/e2e/console/console.test.ts',
  'packages/cli/test/runs-cli.test.ts',
  'test/e2e/remote.test.ts',
  'test/e2e/deploy-chain.test.ts',
  'test/installed.test.ts',
  'packages/engine/test/durability.test.ts',
  'test/e2e/runs-recovery.test.ts',
  'test/e2e/mcp-connector-recovery.test.ts',
  'test/e2e/sub-agents-recovery.test.ts',
  'packages/store/test/pglite.test.ts',
  'packages/store/test/wakeups.test.ts',
  'test/e2e/admin-key.test.ts',
  'test/e2e/approvals-flow.test.ts',
  'test/e2e/mcp-server.test.ts',
  'test/e2e/cache-freshness.test.ts',
  'test/e2e/secret-keys.test.ts',
  'test/e2e/quickstart.test.ts',
  'test/e2e/approvals-recovery.test.ts',
  'test/e2e/knowledge-embedding-recovery.test.ts',
  'test/e2e/sub-agents.test.ts',
  'test/packages.test.ts',
  'test/e2e/secrets-canary.test.ts',
  'test/messages.test.ts',
  'test/e2e/runs-pglite.test.ts',
  'test/e2e/conversation.test.ts',
  'test/e2e/runs-failures.test.ts',
  'test/e2e/key-deleted.test.ts',
  'test/e2e/mcp-connector.test.ts',
];

/**
 * The order of the projects (vitest.config.ts): test/'s files first, as they are the long ones and mostly wait on
 * the processes they start; then the packages' files that keep a worker of their own; then the packages' shared
 * files. A project's files stay together, so a shared worker goes on from one file to the next of its project
 * (vitest ends it when the next file queued is of another project).
 */
export const PROJECT_ORDER = ['processes', 'isolated', 'shared'];

/** Within each project: {@link SLOW_FILES} in their order, then vitest's order (cached durations, size). */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const position = new Map(base.map((spec, index) => [spec, index]));
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const index = SLOW_FILES.indexOf(relative(root, spec.moduleId));
      return index === -1 ? SLOW_FILES.length : index;
    };
    const project = (spec: TestSpecification) => {
      const index = PROJECT_ORDER.indexOf(spec.project.name);
      return index === -1 ? PROJECT_ORDER.length : index;
    };
    return base.sort(
      (a, b) => project(a) - project(b) || rank(a) - rank(b) || (position.get(a) ?? 0) - (position.get(b) ?? 0),
    );
  }
}
