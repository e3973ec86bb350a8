import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { copyPgliteTemplate, pgliteTemplate } from './pglite-template.js';

const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function tables(db: PGlite): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
  );
  return rows.map((row) => row.name);
}

describe('the PGlite template', () => {
  it('copies into an empty database that opens as it is, each copy its own', async () => {
    const template = await pgliteTemplate();
    expect(existsSync(join(template, 'PG_VERSION'))).toBe(true);
    const [a, b] = await Promise.all([1, 2].map(() => mkdtemp(join(tmpdir(), 'mt-pglite-copy-'))));
    dirs.push(a!, b!);
    await Promise.all([copyPgliteTemplate(a!), copyPgliteTemplate(b!)]);
    const first = await PGlite.create(a!);
    try {
      expect(await tables(first)).toEqual([]);
      await first.exec('CREATE TABLE only_here (id int)');
      expect(await tables(first)).toEqual(['only_here']);
    } finally {
      await first.close();
    }
    const second = await PGlite.create(b!);
    try {
      expect(await tables(second)).toEqual([]);
    } finally {
      await second.close();
    }
  });
});
