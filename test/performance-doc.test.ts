import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PERFORMANCE_DOC, provenance, replaceBenchSection, writeBenchSection } from '../bench/lib/perf-doc.js';

// docs/performance.md is one page of current figures (docs/decisions/README.md, #42): a section per bench script,
// each rewritten by its bench between its own markers, and the page stays short.
const root = fileURLToPath(new URL('..', import.meta.url));
const page = readFileSync(join(root, 'docs/performance.md'), 'utf8');
const scripts: Record<string, string> = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts;
const benches = Object.keys(scripts)
  .filter((name) => name.startsWith('bench:'))
  .map((name) => name.slice('bench:'.length));

describe('docs/performance.md', () => {
  it('stays under 400 lines', () => {
    expect(page.split('\n').length).toBeLessThan(400);
  });

  it('has a section with a table, its command, machine and date for each bench script of package.json', () => {
    expect(benches.length).toBeGreaterThanOrEqual(10);
    for (const bench of benches) {
      const start = page.indexOf(`<!-- bench:${bench}:start -->`);
      const end = page.indexOf(`<!-- bench:${bench}:end -->`);
      expect(start, `bench:${bench} has no section`).toBeGreaterThan(-1);
      expect(end, `bench:${bench} has no end marker`).toBeGreaterThan(start);
      const section = page.slice(start, end);
      expect(section, bench).toContain(`(\`npm run bench:${bench}\`)`);
      expect(section, bench).toMatch(
        /^Command: `[^`]*npm run bench:[a-z-]+`\. Machine: .+\. Date: \d{4}-\d{2}-\d{2}\./m,
      );
      expect(section, bench).toMatch(/^\| .+ \|\n\| -+/m);
    }
  });

  it('is written by each bench through the one helper, never by a bench of its own', () => {
    for (const bench of benches) {
      const file = /node (?:--[a-z-]+ )*bench\/([a-z-]+\.bench\.js)/.exec(scripts[`bench:${bench}`])?.[1];
      expect(file, `bench:${bench}`).toBeDefined();
      const source = readFileSync(join(root, 'bench', file as string), 'utf8');
      expect(source, file).toContain(`writeBenchSection('${bench}', `);
      expect(source, file).not.toMatch(/writeFileSync\([^)]*docPath/);
    }
  });
});

describe('bench/lib/perf-doc.js', () => {
  const doc = [
    '# Performance',
    '',
    '<!-- bench:a:start -->',
    'old a',
    '<!-- bench:a:end -->',
    '',
    '<!-- bench:ab:start -->',
    'old ab',
    '<!-- bench:ab:end -->',
    'tail',
    '',
  ].join('\n');

  it('replaces only its own section and keeps the markers and the rest', () => {
    const next = replaceBenchSection(doc, 'a', '\n## A\n\nnew a\n');
    expect(next).toBe(doc.replace('old a', '## A\n\nnew a'));
    expect(replaceBenchSection(next, 'a', 'old a')).toBe(doc);
    expect(replaceBenchSection(doc, 'ab', 'new ab')).toBe(doc.replace('old ab', 'new ab'));
  });

  it('refuses a page without the markers, or with them twice, and a name that is not a plain word', () => {
    expect(() => replaceBenchSection(doc, 'b', 'x')).toThrow('no <!-- bench:b:start -->');
    expect(() => replaceBenchSection(`${doc}<!-- bench:a:start -->\n`, 'a', 'x')).toThrow('twice');
    expect(() => replaceBenchSection(doc, 'a.*', 'x')).toThrow('not a-z');
  });

  it('writes the file it is given, and names the command, the machine and the day', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mt-perf-doc-'));
    try {
      const path = join(dir, 'performance.md');
      writeFileSync(path, doc);
      writeBenchSection('ab', 'new ab', path);
      expect(readFileSync(path, 'utf8')).toBe(doc.replace('old ab', 'new ab'));
      expect(PERFORMANCE_DOC).toBe(join(root, 'docs/performance.md'));
      expect(provenance('npm run bench:x', new Date('2026-12-06T08:00:00Z'))).toMatch(
        /^Command: `npm run bench:x`\. Machine: .+, \d+ cores, \d+ GiB, Node\.js \d+\.\d+\.\d+, load average [\d.]+ at the end\. Date: 2026-12-06\.$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
