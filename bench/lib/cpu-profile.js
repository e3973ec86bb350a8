// node bench/lib/cpu-profile.js DIR_OR_FILE [N] [FROM] — the top N (default 25) frames of V8 .cpuprofile files by self
// time and by inclusive time (a frame's own samples plus its callees', each sample counted once per frame), as % of the
// busy (not idle) samples. With FROM (a substring of a frame, e.g. `handlePostRequest`), only the samples from the
// first one whose stack holds it on, so a server's start-up is left out. Used on `mt serve --cpu-prof` under a bench
// (docs/performance.md at 3251c0c).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const [target, n = '25', from] = process.argv.slice(2);
const files = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(target, f))
  : [target];
const self = new Map();
const inclusive = new Map();
let total = 0;
let idle = 0;
const label = (f) => {
  const url = f.url.replace(/^file:\/\//, '');
  const where = url.includes('node_modules/')
    ? url.slice(url.lastIndexOf('node_modules/') + 13)
    : url.startsWith('/')
      ? relative(process.cwd(), url)
      : url;
  return `${f.functionName || '(anonymous)'} ${where ? `${where}:${f.lineNumber + 1}` : ''}`.trim();
};
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  let started = from === undefined;
  for (const id of profile.samples) {
    if (!started) {
      for (let at = id; at !== undefined && !started; at = parent.get(at)) {
        started = label(byId.get(at).callFrame).includes(from);
      }
      if (!started) continue;
    }
    const leaf = byId.get(id);
    const key = label(leaf.callFrame);
    if (key === '(idle)') {
      idle++;
      continue;
    }
    total++;
    self.set(key, (self.get(key) ?? 0) + 1);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const k = label(byId.get(at).callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + 1);
    }
  }
}
const top = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(n))
    .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
    .join('\n');
console.log(
  `${files.length} profile(s), ${total} busy samples and ${idle} idle\n\nSelf time:\n${top(self)}\n\nInclusive time:\n${top(inclusive)}`,
);
