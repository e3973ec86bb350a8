import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The SDK installs without @maitento/lang, so it carries copies of lang's wire types; they must not drift.
const packages = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(packages + path, 'utf8');
const withoutHeader = (text: string) => text.replace(/^(\/\/.*\n)+/, '');

describe("the SDK's copies of @maitento/lang's wire types", () => {
  it.each([
    ['sdk/src/wire/resources.ts', 'lang/src/config/resources.ts'],
    ['sdk/src/wire/diagnostic.ts', 'lang/src/diagnostics/diagnostic.ts'],
  ])('%s is %s, below its header', (copy, source) => {
    expect(read(copy)).toMatch(/^\/\/ A copy of packages\/lang\//);
    expect(withoutHeader(read(copy))).toBe(read(source));
  });
});
