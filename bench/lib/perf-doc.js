// The one writer of docs/performance.md: each bench rewrites only its own section, between
// `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->`, and leaves the rest of the page as it is.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

export const PERFORMANCE_DOC = fileURLToPath(new URL('../../docs/performance.md', import.meta.url));

const startMarker = (name) => `<!-- bench:${name}:start -->`;
const endMarker = (name) => `<!-- bench:${name}:end -->`;

/** `doc` with the section of bench `name` replaced by `body`; throws when the markers are missing or repeated. */
export function replaceBenchSection(doc, name, body) {
  if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`bench section name ${JSON.stringify(name)} is not a-z, 0-9, -`);
  const start = startMarker(name);
  const end = endMarker(name);
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from === -1 || to === -1 || to < from) {
    throw new Error(`docs/performance.md has no ${start} … ${end} markers`);
  }
  if (doc.indexOf(start, from + 1) !== -1 || doc.indexOf(end, to + 1) !== -1) {
    throw new Error(`docs/performance.md has the bench:${name} markers twice`);
  }
  return `${doc.slice(0, from + start.length)}\n${body.trim()}\n${doc.slice(to)}`;
}

/** Rewrites the section of bench `name` in docs/performance.md (or `path`) with `body`. */
export function writeBenchSection(name, body, path = PERFORMANCE_DOC) {
  writeFileSync(path, replaceBenchSection(readFileSync(path, 'utf8'), name, body));
  console.error(`wrote ${path === PERFORMANCE_DOC ? 'docs/performance.md' : path} (bench:${name})`);
}

/** The machine a figure was measured on: CPU model, cores, memory, Node.js, load average now. */
export function machine() {
  const cpu = cpus()[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU';
  const [load1] = loadavg();
  return `${cpu}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node.js ${process.versions.node}, load average ${load1.toFixed(1)} at the end`;
}

/** The line under a section's heading: the command that reproduces it, the machine, the date (UTC). */
export function provenance(command, date = new Date()) {
  return `Command: \`${command}\`. Machine: ${machine()}. Date: ${date.toISOString().slice(0, 10)}.`;
}
