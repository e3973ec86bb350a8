import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/configuration.md is the one list of environment variables: the code reads none it does not list,
// it lists none the code does not read, and docker-compose.yml, .env.example and the Dockerfile agree with it.
const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * Every variable the packages' sources read: `process.env.X`, `process.env['X']`, `env.X` of an env object,
 * and names passed as text to the helpers that read the environment (`envNumber('MT_MAX_STEPS', 20)`).
 */
function variablesReadBySources(): string[] {
  const names: string[] = [];
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', pkg, 'src');
    for (const file of sourceFiles(src)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)) names.push(m[1]);
      for (const m of text.matchAll(/process\.env\[\s*'([A-Z][A-Z0-9_]*)'\s*\]/g)) names.push(m[1]);
      for (const m of text.matchAll(/(?<![\w.])env\.([A-Z][A-Z0-9_]*)\b/g)) names.push(m[1]);
      for (const m of text.matchAll(/'((?:MT|OPENAI|ANTHROPIC|DATABASE)_[A-Z0-9_]+)'/g)) names.push(m[1]);
    }
  }
  return sorted(names);
}

/** The table of docs/configuration.md: variable → who reads it. */
function documented(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const m of read('docs/configuration.md').matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]+) \|/gm)) {
    rows.set(m[1], m[2]);
  }
  return rows;
}

/** The variables docker compose passes to the server and the worker, and the ones it interpolates. */
function composeVariables(): string[] {
  const text = read('docker-compose.yml');
  const names = [...text.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]);
  const block = /^x-maitento-environment:.*\n((?:[ #].*\n|\n)*)/m.exec(text)?.[1] ?? '';
  for (const m of block.matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)) names.push(m[1]);
  return sorted(names);
}

function envExampleVariables(): string[] {
  return sorted([...read('.env.example').matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
}

/** The files of `pkg`'s sources that read `process.env`, and the variables they name as text. */
function environmentReaders(pkg: string): { files: string[]; names: string[] } {
  const files: string[] = [];
  const names: string[] = [];
  for (const file of sourceFiles(join(root, 'packages', pkg, 'src'))) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('process.env')) continue;
    files.push(file.slice(root.length).replaceAll('\\', '/'));
    for (const m of text.matchAll(/(?:process\.env\.|')((?:MT|OPENAI|ANTHROPIC|DATABASE)_[A-Z0-9_]+)/g))
      names.push(m[1]);
  }
  return { files, names: sorted(names) };
}

describe('settings', () => {
  it('the engine and the server each read the environment in one module, and no variable in both', () => {
    const engine = environmentReaders('engine');
    const server = environmentReaders('server');
    expect(engine.files).toEqual(['packages/engine/src/engine/settings.ts']);
    expect(server.files).toEqual(['packages/server/src/server/settings.ts']);
    expect(engine.names).toContain('MT_APPROVAL_TTL');
    expect(server.names.filter((name) => engine.names.includes(name))).toEqual([]);
  });
});

describe('docs/configuration.md', () => {
  const docs = documented();
  const deployment = sorted([...docs].filter(([, by]) => /mt serve|mt worker|compose/.test(by)).map(([name]) => name));

  it('lists every environment variable the packages read, including those read through helpers', () => {
    const read = variablesReadBySources();
    // The scan itself must see direct reads, env objects and helper arguments, or it proves nothing.
    expect(read).toEqual(expect.arrayContaining(['DATABASE_URL', 'HOME', 'MT_MAX_STEPS', 'OPENAI_API_KEY']));
    expect(read.filter((name) => !docs.has(name))).toEqual([]);
  });

  it('lists no variable that nothing reads (compose reads POSTGRES_PASSWORD itself)', () => {
    const read = new Set(variablesReadBySources());
    expect([...docs.keys()].filter((name) => !read.has(name) && name !== 'POSTGRES_PASSWORD')).toEqual([]);
  });

  it('names the same variables as docker-compose.yml and .env.example: every one the server and the worker read', () => {
    expect(deployment).toContain('MT_SECRET_KEY');
    expect(composeVariables()).toEqual(deployment);
    expect(envExampleVariables()).toEqual(deployment);
  });

  it('mentions every variable the Dockerfile names', () => {
    const dockerfile = read('Dockerfile');
    const named = sorted(
      [...dockerfile.matchAll(/\b((?:MT|OPENAI|ANTHROPIC|DATABASE|NODE|POSTGRES)_[A-Z0-9_]+)\b/g)].map((m) => m[1]),
    );
    expect(named).toEqual(expect.arrayContaining(['DATABASE_URL', 'NODE_ENV']));
    const page = read('docs/configuration.md');
    expect(named.filter((name) => !page.includes(`\`${name}`))).toEqual([]);
  });
});
