import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createServer } from '@maitento/server';
import { createPgliteDb } from '@maitento/store';
import { describe, expect, it } from 'vitest';
import { rolesTable, servedOpenApi, withRolesTable } from '../scripts/gen-rest-reference.js';

// docs/roles.md's table of which key role may call each operation is the routes' own declaration (x-roles of the
// served OpenAPI document, from ROUTE_ACCESS): made again here, it must equal the page. Fix a failure with
// `npm run build && npm run docs:rest`.
describe('docs/roles.md', () => {
  it("has the table of the routes' declared roles", async () => {
    const db = await createPgliteDb();
    try {
      const doc = await servedOpenApi(createServer, db);
      const table = rolesTable(doc);
      expect(table).toContain('| `POST /v1/approvals/{id}/approve` | yes | yes |  | yes |');
      expect(table).toContain('| `POST /v1/interactions/{name}/runs` | yes | yes | yes |  |');
      expect(table).toContain('| `POST /v1/deploy` | yes |  |  |  |');
      const page = readFileSync(fileURLToPath(new URL('../docs/roles.md', import.meta.url)), 'utf8');
      expect(page).toBe(withRolesTable(page, table));
    } finally {
      await db.close();
    }
  });
});
