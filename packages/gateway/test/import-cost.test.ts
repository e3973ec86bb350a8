import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const gatewayDist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const langDist = fileURLToPath(new URL('../../lang/dist/index.js', import.meta.url));

// A child Node.js records every module it loads through a resolve hook, then imports one built entry point.
function modulesLoadedBy(entry: string): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.push(r.url); return r; } });
    await import(${JSON.stringify(new URL(`file://${entry}`).href)});
    process.stdout.write(JSON.stringify(seen));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout) as string[];
}

describe('importing @maitento/gateway', () => {
  it('is built (the test reads dist, as a server process does)', () => {
    expect(existsSync(gatewayDist)).toBe(true);
  });

  it('does not load the compiler: no chevrotain, no @maitento/lang code but its JSON Schema entry point', () => {
    const loaded = modulesLoadedBy(gatewayDist);
    expect(loaded.some((url) => url.includes('/gateway/dist/'))).toBe(true);
    expect(loaded.filter((url) => url.includes('/chevrotain/'))).toEqual([]);
    // `@maitento/lang/json-schema` (the one maker of ajv instances, draft-07 and 2020-12, with the linear-time pattern
    // engine they run patterns on, and the resolver of local `$ref`s) and nothing else of lang; the hook sees each
    // import of it, so the list is made distinct.
    const lang = new Set(loaded.filter((url) => url.includes('/lang/dist/')));
    expect([...lang].map((url) => url.slice(url.indexOf('/lang/dist/'))).sort()).toEqual([
      '/lang/dist/config/json-schema-dialect.js',
      '/lang/dist/config/linear-pattern.js',
    ]);
  });

  it('does not load the MCP SDK (imported on the first call of an MCP connector)', () => {
    const loaded = modulesLoadedBy(gatewayDist);
    expect(loaded.filter((url) => url.includes('@modelcontextprotocol'))).toEqual([]);
  });

  it('the control: importing @maitento/lang does load chevrotain, so the probe sees it', () => {
    expect(modulesLoadedBy(langDist).some((url) => url.includes('/chevrotain/'))).toBe(true);
  });
});
