import { readFileSync } from 'node:fs';
import { compileRepo, type RepoFile } from '@maitento/lang';
import { describe, expect, it } from 'vitest';

const doc = readFileSync(new URL('../../../../docs/mtr-language.md', import.meta.url), 'utf8');

/** Every fenced block preceded by a `File: <path>` line: a whole file of the example repo. */
function wholeFiles(text: string): RepoFile[] {
  const files: RepoFile[] = [];
  const pattern = /^File: (\S+)\n```(?:mtr|json)\n([\s\S]*?)^```$/gm;
  for (const match of text.matchAll(pattern)) files.push({ path: match[1], content: match[2] });
  return files;
}

describe('docs/mtr-language.md', () => {
  it('has whole-file examples of every resource kind', () => {
    const paths = wholeFiles(doc).map((f) => f.path);
    for (const folder of [
      'connectors/open-api/',
      'connectors/mcp/',
      'external-operations/open-api/',
      'agents/',
      'interactions/one-shot/',
      'auth-providers/',
      'schedules/',
      'triggers/',
    ]) {
      expect(
        paths.some((p) => p.startsWith(folder) && p.endsWith('.mtr')),
        folder,
      ).toBe(true);
    }
  });

  it('has whole-file examples that compile together without any diagnostic', () => {
    const repo = compileRepo(wholeFiles(doc));
    expect(repo.diagnostics).toEqual([]);
    expect(repo.sources.length).toBe(wholeFiles(doc).filter((f) => f.path.endsWith('.mtr')).length);
  });
});
