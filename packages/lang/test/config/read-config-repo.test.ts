import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { compileRepo, readConfigRepo } from '@maitento/lang';
import { afterAll, describe, expect, it } from 'vitest';

const dirs: string[] = [];

function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mt-read-repo-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const schema = (name: string) => JSON.stringify({ type: 'object', properties: { [name]: { type: 'string' } } });

describe('readConfigRepo', () => {
  it('reads every .json file an @json names, in every form the grammar allows', async () => {
    const dir = repo({
      'connectors/open-api/c.mtr': `method = "POST"
url = "https://api.example.com/x"
description = "d"
schema.request = @json("schemas/trailing-comma.json",)
schema.response = @json( // the answer
  "schemas/comment.json"
)
`,
      'schemas/trailing-comma.json': schema('a'),
      'schemas/comment.json': schema('b'),
      'schemas/unused.json': schema('c'),
    });
    const files = await readConfigRepo(dir);
    expect(files.map((f) => f.path)).toEqual([
      'connectors/open-api/c.mtr',
      'schemas/comment.json',
      'schemas/trailing-comma.json',
    ]);
    const compiled = compileRepo(files);
    expect(compiled.diagnostics).toEqual([]);
    expect(compiled.connectors[0].schema.request).toEqual(JSON.parse(schema('a')));
    expect(compiled.connectors[0].schema.response).toEqual(JSON.parse(schema('b')));
  });

  it('finds an @json inside arrays and objects, and not one inside a string or a comment', async () => {
    const dir = repo({
      'external-operations/open-api/t.mtr': `connector = @ref("c")
guidance = "Mentions @json(\\"schemas/in-string.json\\") in prose"
// @json("schemas/in-comment.json")
bindings.request = { items = [ @json("schemas/nested.json") ] }
`,
      'schemas/in-string.json': '{}',
      'schemas/in-comment.json': '{}',
      'schemas/nested.json': '{}',
    });
    const files = await readConfigRepo(dir);
    expect(files.map((f) => f.path)).toEqual(['external-operations/open-api/t.mtr', 'schemas/nested.json']);
  });
});
