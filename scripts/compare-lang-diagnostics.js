#!/usr/bin/env node
// Usage: node scripts/compare-lang-diagnostics.js OTHER_CHECKOUT
// Parses the repository's .mtr files, and many broken variants of each (every 5th prefix, a character deleted
// every 11, a `}` inserted every 13), with this checkout's built @maitento/lang and with OTHER_CHECKOUT's (each
// with its own node_modules, e.g. a worktree of main on the previous chevrotain), and fails, showing the first
// differences, unless every diagnostic and every AST is the same. Both need a build (`npx tsc -b`).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

if (process.argv[2] === '--parse') {
  // Child: print one JSON line per text parsed by the @maitento/lang built at argv[3].
  const { parseMtr } = await import(join(process.argv[3], 'packages/lang/dist/index.js'));
  const out = [];
  for (const file of process.argv.slice(4)) {
    const text = readFileSync(join(root, file), 'utf8');
    const variants = [text];
    for (let i = 0; i < text.length; i += 5) variants.push(text.slice(0, i));
    for (let i = 0; i < text.length; i += 11) variants.push(text.slice(0, i) + text.slice(i + 1));
    for (let i = 0; i < text.length; i += 13) variants.push(`${text.slice(0, i)}}${text.slice(i)}`);
    for (const v of variants) {
      const { diagnostics, ast } = parseMtr(v, file);
      out.push(JSON.stringify({ diagnostics, ast }));
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
} else {
  compare(process.argv[2]);
}

function compare(other) {
  if (!other) {
    console.error('usage: node scripts/compare-lang-diagnostics.js OTHER_CHECKOUT');
    process.exit(2);
  }
  const files = readdirSync(root, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.mtr') && !f.includes('node_modules') && !f.startsWith('.'))
    .sort();
  const run = (checkout) =>
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--parse', resolve(checkout), ...files], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    }).split('\n');
  const here = run(root);
  const there = run(other);
  let differ = 0;
  for (let i = 0; i < Math.max(here.length, there.length); i++) {
    if (here[i] === there[i]) continue;
    if (differ++ < 3) console.log(`differs:\n  ${relative(root, other) || other}: ${there[i]}\n  here: ${here[i]}`);
  }
  console.log(`${files.length} files, ${here.length - 1} texts parsed; ${differ} differ`);
  process.exitCode = differ ? 1 : 0;
}
