import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';
import { PROJECT_ORDER, SLOW_FILES } from './sequencer.js';

const root = fileURLToPath(new URL('../', import.meta.url));

// The suite's order (test/sequencer.ts) names files and projects by their names: a rename would silently drop a
// file back to vitest's order, or a project to the end.
describe('the slow-first order of the suite', () => {
  it('names files that exist', () => {
    const missing = SLOW_FILES.filter((file) => !existsSync(`${root}${file}`));
    expect(missing).toEqual([]);
  });

  it("names vitest.config.ts's projects, all of them", () => {
    const projects = (config.test?.projects ?? []) as { test?: { name?: string } }[];
    expect(projects.map((project) => project.test?.name).sort()).toEqual([...PROJECT_ORDER].sort());
  });
});
