import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from '@maitento/server';
import { createPgDb } from '@maitento/store';
import { createTestDatabase } from '@maitento/testkit';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../packages/cli/src/program.js';
import { cliReference } from '../scripts/gen-cli-reference.js';
import { restReference, servedOpenApi } from '../scripts/gen-rest-reference.js';

// The generated references cannot drift: each is made again here, from the commands' own help and from the
// OpenAPI document the server serves, and must equal the file in docs/. Fix a failure with
// `npm run build && npm run docs:cli && npm run docs:rest`.
const read = (path: string) => readFileSync(fileURLToPath(new URL(`../${path}`, import.meta.url)), 'utf8');

describe('generated references', () => {
  it('docs/cli-reference.md equals the --help of every mt command (npm run docs:cli)', () => {
    const generated = cliReference(buildProgram);
    expect(generated).toContain('## mt interaction-run');
    expect(generated).toContain('Usage: mt interaction-reject');
    expect(read('docs/cli-reference.md')).toBe(generated);
  });

  it('docs/rest-reference.md equals the served OpenAPI document (npm run docs:rest)', async () => {
    const database = await createTestDatabase('mt_docs_reference');
    const db = createPgDb(database.url);
    try {
      const doc = await servedOpenApi(createServer, db);
      const generated = restReference(doc);
      expect(generated).toContain('### POST /v1/interactions/{name}/runs');
      expect(generated).toContain('operationId: `createSecret`');
      expect(read('docs/rest-reference.md')).toBe(generated);
    } finally {
      await db.close();
      await database.drop();
    }
  });
});
