import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/decisions/ is one record a decision (docs/decisions/README.md): each has a status that says whether it
// holds, every record is in the index, and what the docs and the code cite of it exists. Also: every relative link
// of README.md and docs/ reaches a file, and an anchor into a page reaches one of its headings.
const root = fileURLToPath(new URL('..', import.meta.url));
const decisions = join(root, 'docs/decisions');
const read = (path: string) => readFileSync(path, 'utf8');
const records = readdirSync(decisions)
  .filter((name) => /^\d{4}-.*\.md$/.test(name))
  .sort();
const numbers = new Set(records.map((name) => name.slice(0, 4)));

/** The statuses a record may have: current, current and changed in part by later records, or replaced by one. */
const STATUS = /^Status: (current|current; amended by \d{4}(, \d{4})*|superseded by \d{4})$/;

describe('decision records', () => {
  it('are numbered files with a title, an allowed status, and the three parts, in that order', () => {
    expect(records.length).toBeGreaterThan(40);
    for (const name of records) {
      const text = read(join(decisions, name));
      const lines = text.split('\n');
      expect(name).toMatch(/^\d{4}-[a-z0-9]+(-[a-z0-9]+)*\.md$/);
      expect(lines[0], name).toMatch(new RegExp(`^# ${name.slice(0, 4)}\\. \\S`));
      const status = lines.find((line) => line.startsWith('Status:'));
      expect(status, `${name} has no Status line`).toBeDefined();
      expect(status, name).toMatch(STATUS);
      const date = lines.find((line) => line.startsWith('Date:'));
      if (date !== undefined) expect(date, name).toMatch(/^Date: \d{4}-\d{2}-\d{2}$/);
      const parts = ['## Context', '## Decision', '## Consequences'].map((heading) => lines.indexOf(heading));
      expect(parts.every((at) => at > 0) && parts[0] < parts[1] && parts[1] < parts[2], name).toBe(true);
    }
  });

  it('name only records that exist, later than themselves, in their status', () => {
    for (const name of records) {
      const status = read(join(decisions, name))
        .split('\n')
        .find((line) => line.startsWith('Status:')) as string;
      for (const [named] of status.matchAll(/\d{4}/g)) {
        expect(numbers.has(named), `${name}: ${status}`).toBe(true);
        expect(named > name.slice(0, 4) || status.includes('amended'), `${name}: ${status}`).toBe(true);
      }
    }
  });

  it('are each listed in the index with their status, and the index lists nothing else', () => {
    const index = read(join(decisions, 'README.md'));
    const rows = [...index.matchAll(/^\| \[(\d{4})\]\(([^)]+)\) \| (.+) \| (.+) \|$/gm)];
    expect(rows.map((row) => row[2]).sort()).toEqual(records);
    for (const [, number, file, , status] of rows) {
      expect(file.startsWith(number)).toBe(true);
      const recorded = read(join(decisions, file))
        .split('\n')
        .find((line) => line.startsWith('Status:'));
      expect(recorded, file).toBe(`Status: ${status}`);
    }
  });

  it('are cited by paths that exist, and docs/decisions.md is cited nowhere', () => {
    const cited = new Set<string>();
    const stale: string[] = [];
    for (const file of sourceFiles(root)) {
      const text = read(file);
      for (const [path] of text.matchAll(/docs\/decisions\/\d{4}-[a-z0-9-]+\.md/g)) cited.add(path);
      if (text.includes('docs/decisions.md') && !file.endsWith('decision-records.test.ts')) {
        // The index names the file the records came from; nothing else may point at it.
        if (!file.endsWith(join('docs', 'decisions', 'README.md'))) stale.push(relative(root, file));
      }
    }
    expect(stale).toEqual([]);
    expect(cited.size).toBeGreaterThan(5);
    for (const path of cited) expect(existsSync(join(root, path)), path).toBe(true);
  });
});

describe('links of README.md and docs/', () => {
  it('reach an existing file, and a heading of it when they name an anchor', () => {
    const pages = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];
    const broken: string[] = [];
    for (const page of pages) {
      const text = read(page).replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const [path, anchor] = target.split('#');
        const file = path === '' ? page : resolve(dirname(page), path);
        if (!existsSync(file)) {
          broken.push(`${relative(root, page)}: ${target}`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !anchors(read(file)).has(anchor)) {
          broken.push(`${relative(root, page)}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

/** GitHub's anchors of a Markdown page's headings. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? markdownFiles(join(dir, entry.name))
      : entry.name.endsWith('.md')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The repository's own text files that may cite a record: docs, sources, tests, benches, scripts. */
function sourceFiles(dir: string): string[] {
  const skip = new Set(['node_modules', 'dist', '.git', '.node', 'coverage', '.maitento']);
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skip.has(entry.name) || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(md|ts|tsx|js|mjs|cjs|py|json|yaml|yml)$/.test(entry.name) && !entry.name.endsWith('.lock') ? [path] : [];
  });
}
