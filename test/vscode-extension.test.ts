import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import oniguruma from 'vscode-oniguruma';
import textmate from 'vscode-textmate';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../editors/vscode/src/server-path.js';

// The extension as it ships: bundled with esbuild and packed with vsce, both run offline, no VS Code download.
const root = fileURLToPath(new URL('../', import.meta.url));
const extensionDir = join(root, 'editors/vscode');
const require = createRequire(import.meta.url);
const run = promisify(execFile);
const temp = mkdtempSync(join(tmpdir(), 'mt-vscode-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** The entries of a zip file (a .vsix), name → content. */
function unzip(path: string): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const out = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (err, stream) => {
          if (err || !stream) return reject(err);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('the VS Code extension package', () => {
  let files: Map<string, Buffer>;

  beforeAll(async () => {
    const esbuild = require.resolve('esbuild/bin/esbuild');
    const vsce = require.resolve('@vscode/vsce/vsce');
    const script = JSON.parse(readFileSync(join(extensionDir, 'package.json'), 'utf8')).scripts.build as string;
    const args = script.split(' ').slice(1);
    await run(esbuild, args, { cwd: extensionDir, timeout: 60_000 });
    const out = join(temp, 'maitento.vsix');
    await run(process.execPath, [vsce, 'package', '--no-dependencies', '--out', out], {
      cwd: extensionDir,
      timeout: 90_000,
    });
    files = await unzip(out);
  }, 120_000);

  it('type-checks against the VS Code API and vscode-languageclient (tsc -p editors/vscode)', async () => {
    // TypeScript 7's package exports no `./bin/tsc`: the file, as npm installs it.
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    await expect(run(process.execPath, [tsc, '-p', extensionDir], { timeout: 120_000 })).resolves.toBeDefined();
  }, 120_000);

  it('8. vsce package builds a .vsix holding the manifest, grammar, language configuration and bundle', () => {
    const manifest = JSON.parse(files.get('extension/package.json')?.toString() ?? '{}');
    expect(manifest.contributes.languages[0]).toMatchObject({ id: 'maitento', extensions: ['.mtr'] });
    expect(manifest.contributes.grammars[0]).toMatchObject({ language: 'maitento', scopeName: 'source.mtr' });
    expect(manifest.contributes.configuration.properties['maitento.server.path'].type).toBe('string');
    const grammar = JSON.parse(files.get('extension/syntaxes/mtr.tmLanguage.json')?.toString() ?? '{}');
    expect(grammar.scopeName).toBe('source.mtr');
    const config = JSON.parse(files.get('extension/language-configuration.json')?.toString() ?? '{}');
    expect(config.comments.lineComment).toBe('//');
    expect(files.has('extension/dist/extension.js')).toBe(true);
    expect(files.has('extension.vsixmanifest')).toBe(true);
    // The sources and dependencies stay out: the bundle holds what runs.
    expect([...files.keys()].filter((f) => f.includes('node_modules') || f.includes('/src/'))).toEqual([]);
  });
});

describe('the TextMate grammar', () => {
  async function tokenizer() {
    const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
    await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
    const registry = new textmate.Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
        createOnigString: (s: string) => new oniguruma.OnigString(s),
      }),
      loadGrammar: async () =>
        textmate.parseRawGrammar(
          readFileSync(join(extensionDir, 'syntaxes/mtr.tmLanguage.json'), 'utf8'),
          'mtr.tmLanguage.json',
        ),
    });
    const grammar = await registry.loadGrammar('source.mtr');
    if (!grammar) throw new Error('grammar did not load');
    /** Each token of a line as [text, innermost scope]. */
    return (line: string): [string, string][] => {
      const { tokens } = grammar.tokenizeLine(line, textmate.INITIAL);
      return tokens
        .map((t): [string, string] => [line.slice(t.startIndex, t.endIndex), t.scopes[t.scopes.length - 1]])
        .filter(([text]) => text.trim() !== '');
    };
  }

  it('8. tokenizes fixture lines: keys, strings, directives, numbers, constants, comments', async () => {
    const tokenize = await tokenizer();
    const seed = join(root, 'packages/lang/test/fixtures/seed');
    const tool = readFileSync(join(seed, 'external-operations/open-api/current-weather.mtr'), 'utf8').split('\n');
    const nested = readFileSync(join(root, 'packages/lang/test/syntax/fixtures/nested.mtr'), 'utf8').split('\n');

    expect(tokenize(tool[0])).toEqual([[tool[0], 'comment.line.double-slash.mtr']]);
    expect(tokenize(tool[2])).toEqual([
      ['connector', 'variable.other.property.mtr'],
      ['=', 'keyword.operator.assignment.mtr'],
      ['@ref', 'keyword.other.directive.mtr'],
      ['(', 'punctuation.section.parens.mtr'],
      ['"', 'punctuation.definition.string.begin.mtr'],
      ['open-meteo-forecast', 'string.quoted.double.mtr'],
      ['"', 'punctuation.definition.string.end.mtr'],
      [')', 'punctuation.section.parens.mtr'],
    ]);
    const binding = tool.find((l) => l.startsWith('bindings.query:current')) ?? '';
    expect(tokenize(binding).slice(0, 5)).toEqual([
      ['bindings', 'variable.other.property.mtr'],
      ['.', 'punctuation.separator.key.mtr'],
      ['query', 'variable.other.property.mtr'],
      [':', 'punctuation.separator.key.mtr'],
      ['current', 'variable.other.property.mtr'],
    ]);
    const numbers = nested.find((l) => l.startsWith('numbers')) ?? '';
    expect(
      tokenize(numbers)
        .filter(([, scope]) => scope === 'constant.numeric.mtr')
        .map(([t]) => t),
    ).toEqual(['0', '-0', '1.0', '1e10', '-2.5E-3']);
    const flags = nested.find((l) => l.startsWith('flags')) ?? '';
    expect(
      tokenize(flags)
        .filter(([, scope]) => scope === 'constant.language.mtr')
        .map(([t]) => t),
    ).toEqual(['true', 'false', 'null']);
    const escaped = nested.find((l) => l.includes('default =')) ?? '';
    expect(tokenize(escaped).filter(([, scope]) => scope === 'constant.character.escape.mtr').length).toBe(5);
    expect(tokenize('task = "Help %%shop%% now"')).toContainEqual(['%%shop%%', 'variable.parameter.placeholder.mtr']);
  });
});

describe('which mt the extension starts', () => {
  const fake = (dir: string) => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'mt'), '#!/bin/sh\n');
    chmodSync(join(dir, 'mt'), 0o755);
    return join(dir, 'mt');
  };

  it("prefers the workspace's node_modules/.bin/mt, then the setting, then PATH, else none", () => {
    const ws = join(temp, 'ws');
    const onPath = join(temp, 'bin');
    const local = fake(join(ws, 'node_modules/.bin'));
    const global = fake(onPath);
    const env = { PATH: onPath };
    expect(findServer([ws], '/opt/mt', env, 'linux')).toEqual({ command: local, from: 'workspace' });
    expect(findServer([join(temp, 'other')], '/opt/mt', env, 'linux')).toEqual({ command: '/opt/mt', from: 'setting' });
    expect(findServer([join(temp, 'other')], '', env, 'linux')).toEqual({ command: global, from: 'path' });
    expect(findServer([join(temp, 'other')], undefined, { PATH: join(temp, 'none') }, 'linux')).toBeUndefined();
  });
});
