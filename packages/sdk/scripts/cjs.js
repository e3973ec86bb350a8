#!/usr/bin/env node
// The SDK's CommonJS face (issue #22, #23): `require('@maitento/sdk')` and TypeScript's `node16` resolution
// from CommonJS. The SDK is built once, as ES modules (tsc -b writes dist/); this writes dist/cjs/:
// - index.js, which `require`s the ES module build: Node.js 22.12 and newer (the SDK's `engines`) load an ES
//   module with `require`, so CommonJS and ESM users share one copy of every class (`instanceof` holds);
// - the declaration files again, in a folder whose package.json says `commonjs`, so TypeScript reads them as
//   the CommonJS module they describe; imports of the ESM-only `typebox` carry `resolution-mode: import`.
// Run by the root `npm run build` and by the SDK's `prepack`.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const out = join(dist, 'cjs');
if (!statSync(join(dist, 'index.js'), { throwIfNoEntry: false })) {
  console.error('packages/sdk/scripts/cjs.js: no dist/index.js; run `npm run build` at the repository root first');
  process.exit(1);
}

function declarations(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === out ? [] : declarations(path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

// `import { type A, B } from 'typebox'` → `import type { A, B } from 'typebox' with { 'resolution-mode': 'import' }`
function typeboxAsEsm(text) {
  return text.replace(/^import (type )?\{([^}]*)\} from '(typebox[^']*)';$/gm, (_all, _type, names, spec) => {
    const plain = names
      .split(',')
      .map((n) => n.trim().replace(/^type\s+/, ''))
      .filter(Boolean)
      .join(', ');
    return `import type { ${plain} } from '${spec}' with { 'resolution-mode': 'import' };`;
  });
}

rmSync(out, { recursive: true, force: true });
for (const file of declarations(dist)) {
  const target = join(out, relative(dist, file));
  mkdirSync(dirname(target), { recursive: true });
  const text = readFileSync(file, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, '');
  writeFileSync(target, typeboxAsEsm(text));
}
writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
writeFileSync(join(out, 'index.js'), "'use strict';\nmodule.exports = require('../index.js');\n");
// `@maitento/sdk/client` (the client without the wire's TypeBox schemas), the same way.
writeFileSync(join(out, 'client-entry.js'), "'use strict';\nmodule.exports = require('../client-entry.js');\n");
// `@maitento/sdk/wire` (the wire's plain lists and types, for the packages below the server), the same way.
writeFileSync(join(out, 'wire-entry.js'), "'use strict';\nmodule.exports = require('../wire-entry.js');\n");
