import { readFileSync } from 'node:fs';
import { ErrorRegistry } from '@maitento/errors';
import { SdkErrorRegistry } from '@maitento/sdk';
import { describe, expect, it } from 'vitest';

// Every package's index is searched for exported error registries, so a new registry is covered
// without touching this test.
async function allCodes(): Promise<Map<string, number>> {
  const modules = await Promise.all([
    import('@maitento/errors'),
    import('@maitento/egress'),
    import('@maitento/lang'),
    import('@maitento/gateway'),
    import('@maitento/store'),
    import('@maitento/engine'),
    import('@maitento/server'),
    import('@maitento/sdk'),
    import('@maitento/cli'),
  ]);
  const codes = new Map<string, number>();
  for (const mod of modules) {
    for (const value of Object.values(mod)) {
      // The SDK's registry has the same shape without extending ErrorRegistry (it installs on its own).
      if (value instanceof ErrorRegistry || value instanceof SdkErrorRegistry) {
        for (const code of value.codes()) codes.set(code, value.specs[code].status);
      }
    }
  }
  return codes;
}

function documentedCodes(): Map<string, string> {
  const text = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const sections = new Map<string, string>();
  const parts = text.split(/^### `/m).slice(1);
  for (const part of parts) {
    const code = part.slice(0, part.indexOf('`'));
    sections.set(code, part);
  }
  return sections;
}

describe('docs/errors.md', () => {
  it('documents every registry code, with its status, and no code that does not exist', async () => {
    const codes = await allCodes();
    const documented = documentedCodes();
    expect(codes.size).toBeGreaterThan(0);
    expect([...documented.keys()].sort()).toEqual([...codes.keys()].sort());
    for (const [code, status] of codes) {
      expect(documented.get(code), `${code} section names its status`).toMatch(new RegExp(`Status: ${status}\\b`));
    }
  });
});
