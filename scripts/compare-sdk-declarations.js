#!/usr/bin/env node
// Usage: node scripts/compare-sdk-declarations.js BEFORE_DIR [AFTER_DIR]
// Checks that two builds of @maitento/sdk's declarations (packages/sdk/dist/**/*.d.ts, e.g. one saved before a
// compiler upgrade and the current one) declare the same public types: for every name a declaration file exports,
// the type (and, for a value, `typeof` it) must be identical in both, by TypeScript's own identity test, not by
// text (a new compiler may print members or union members in another order). Runs the repository's `tsc`.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const before = process.argv[2];
const after = process.argv[3] ?? join(root, 'packages/sdk/dist');
if (!before) {
  console.error('usage: node scripts/compare-sdk-declarations.js BEFORE_DIR [AFTER_DIR]');
  process.exit(2);
}

function declarationFiles(dir) {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.d.ts'))
    .sort();
}
const beforeFiles = declarationFiles(before);
const afterFiles = declarationFiles(after);
const missing = beforeFiles.filter((f) => !afterFiles.includes(f));
const added = afterFiles.filter((f) => !beforeFiles.includes(f));

/** How many type parameters the declaration whose name ends at `at` has (0 when none). */
function typeParameterCount(text, at) {
  if (text[at] !== '<') return 0;
  let depth = 0;
  let count = 1;
  for (let j = at; j < text.length; j++) {
    const c = text[j];
    if (c === '<' || c === '(' || c === '[' || c === '{') depth++;
    else if (c === '>' || c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return count;
    } else if (c === ',' && depth === 1) count++;
  }
  return count;
}

const dir = mkdtempSync(join(tmpdir(), 'mt-sdk-dts-'));
try {
  // A class with private (#private) or protected members is nominal: two declarations of it are never identical.
  // The copies type-checked here make those members public (their text is compared separately, below), so the
  // identity test is structural all the way through.
  const publicCopy = (from, to) => {
    mkdirSync(dirname(to), { recursive: true });
    const text = readFileSync(from, 'utf8')
      .replace(/^\s+#private;\n/gm, '')
      .replace(/^(\s+)(?:private|protected) /gm, '$1');
    writeFileSync(to, text);
  };
  for (const f of beforeFiles) publicCopy(join(before, f), join(dir, 'before', f));
  for (const f of afterFiles) publicCopy(join(after, f), join(dir, 'after', f));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  const lines = [
    'type Same<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;',
  ];
  let checked = 0;
  const nonPublic = [];
  beforeFiles
    .filter((f) => afterFiles.includes(f))
    .forEach((f, i) => {
      const spec = f.replace(/\.d\.ts$/, '.js');
      lines.push(`import type * as B${i} from './before/${spec}';`, `import type * as A${i} from './after/${spec}';`);
      const text = readFileSync(join(before, f), 'utf8');
      for (const m of text.matchAll(
        /^export (?:declare )?(?:abstract )?(type|interface|class|const|function|enum) ([A-Za-z_$][\w$]*)/gm,
      )) {
        const [, kind, name] = m;
        const params = typeParameterCount(text, m.index + m[0].length);
        const args = params ? `<${Array(params).fill('any').join(', ')}>` : '';
        const at = `${f} ${name}`;
        const same = (x, y) => lines.push(`export const c${checked++}: Same<${x}, ${y}> = true; // ${at}`);
        if (kind === 'const' || kind === 'function') {
          same(`typeof B${i}.${name}`, `typeof A${i}.${name}`);
        } else {
          same(`B${i}.${name}${args}`, `A${i}.${name}${args}`);
          if (kind === 'class' || kind === 'enum') same(`typeof B${i}.${name}`, `typeof A${i}.${name}`);
        }
      }
      const hidden = (t) =>
        t
          .split('\n')
          .filter((l) => /^\s+(#private|private |protected )/.test(l))
          .map((l) => l.trim())
          .sort()
          .join('\n');
      if (hidden(text) !== hidden(readFileSync(join(after, f), 'utf8'))) nonPublic.push(f);
    });
  writeFileSync(join(dir, 'check.ts'), `${lines.join('\n')}\n`);
  const compilerOptions = {
    strict: true,
    noEmit: true,
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib: ['es2022', 'dom', 'dom.asynciterable'],
    types: [],
    skipLibCheck: true,
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check.ts'] }));
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', '.'], {
    cwd: dir,
    encoding: 'utf8',
  });
  const version = execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-v'], {
    encoding: 'utf8',
  }).trim();
  const out = (tsc.stdout + tsc.stderr).trim();
  for (const f of missing) console.log(`only before: ${f}`);
  for (const f of added) console.log(`only after: ${f}`);
  for (const f of nonPublic) console.log(`private or protected members differ: ${f}`);
  if (out) {
    // Name the declaration each error is about (the comment at the end of its line in check.ts).
    const check = readFileSync(join(dir, 'check.ts'), 'utf8').split('\n');
    for (const line of out.split('\n')) {
      const at = /^check\.ts\((\d+),/.exec(line);
      console.log(at ? `differs: ${check[Number(at[1]) - 1].split('// ')[1]}: ${line}` : line);
    }
  }
  console.log(`${version}: ${checked} exported types and values in ${beforeFiles.length} declaration files compared`);
  process.exitCode = out || missing.length || added.length || nonPublic.length ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
