import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/program.js';

// The real built `mt`: what a user's shell sources is what `mt completion` prints.
const root = fileURLToPath(new URL('../../../', import.meta.url));
const mtBin = join(root, 'packages/cli/bin/mt.js');

function run(file: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      file,
      args,
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

const mt = (...args: string[]) => run(process.execPath, [mtBin, ...args]);

// Every command of the tree with its path (`import openapi`), as commander holds it.
function leaves(command: Command, path: string[] = []): { path: string[]; command: Command }[] {
  if (command.commands.length === 0) return [{ path, command }];
  return command.commands.flatMap((c) => leaves(c, [...path, c.name()]));
}

const program = buildProgram();
const topLevel = program.commands.map((c) => c.name());

describe('mt completion', () => {
  // The completion candidates bash offers for the words of `line` (the last one the word being completed).
  async function candidates(script: string, line: string[]): Promise<{ complete: string; words: string[] }> {
    const words = line.map((w) => `'${w}'`).join(' ');
    const shell = `source /dev/stdin <<'MT_COMPLETION'\n${script}MT_COMPLETION
complete -p mt
COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _mt
printf '%s\\n' "\${COMPREPLY[@]}"`;
    // --norc: bash reads ~/.bashrc when its stdin is a socket, as Node's pipes are.
    const result = await run('bash', ['--norc', '--noprofile', '-c', shell]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [complete = '', ...rest] = result.stdout.trimEnd().split('\n');
    return { complete, words: rest.filter((w) => w !== '') };
  }

  it('prints a bash script that registers mt and completes commands and options from the command tree', async () => {
    const printed = await mt('completion', 'bash');
    expect(printed.code).toBe(0);
    const script = printed.stdout;
    const all = await candidates(script, ['mt', '']);
    expect(all.complete).toBe('complete -o default -F _mt mt');
    // Every top-level command of the tree, the completion command itself included, and nothing else.
    expect(all.words.sort()).toEqual([...topLevel].sort());
    expect(all.words).toContain('completion');
    const partial = await candidates(script, ['mt', 'approval-']);
    expect(partial.words).toEqual(['approval-approve', 'approval-get', 'approval-list', 'approval-reject']);
    // A subcommand, and the options of a nested command after an option that takes a value.
    expect((await candidates(script, ['mt', 'import', 'op'])).words).toEqual(['openapi']);
    expect((await candidates(script, ['mt', 'import', 'openapi', '--out', 'x', '--dr'])).words).toEqual(['--dry-run']);
    const options = await candidates(script, ['mt', 'run-list', '--']);
    const fromTree = program.commands.find((c) => c.name() === 'run-list')!.options.map((o) => o.long);
    expect(options.words).toEqual([...fromTree, '--help']);
    // After an option that takes a value, no command or option is offered (the shell completes file names).
    expect((await candidates(script, ['mt', 'agent-get', '--api', ''])).words).toEqual([]);
  });

  it('prints zsh and fish scripts that name every command, and refuses another shell', async () => {
    const zsh = await mt('completion', 'zsh');
    expect(zsh.code).toBe(0);
    expect(zsh.stdout.startsWith('#compdef mt\n')).toBe(true);
    expect(zsh.stdout).toContain('compdef _mt mt');
    const fish = await mt('completion', 'fish');
    expect(fish.code).toBe(0);
    for (const name of topLevel) {
      expect(zsh.stdout).toContain(`'${name}:`);
      expect(fish.stdout).toContain(`complete -c mt -n '__fish_use_subcommand' -a '${name}'`);
    }
    expect(fish.stdout).toContain(
      "complete -c mt -n '__fish_seen_subcommand_from openapi' -l 'out' -r -F -d 'the config repo to write into'",
    );
    // No file names while a command is chosen; a command's arguments (mt deploy DIR) keep them.
    expect(fish.stdout).toContain("complete -c mt -n '__fish_use_subcommand' -f\n");
    expect(fish.stdout).not.toContain('complete -c mt -f');
    const other = await mt('completion', 'powershell');
    expect(other.code).toBe(2);
    expect(other.stderr).toContain("'powershell' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish");
  });
});

// Commands that print no JSON on stdout, each with the reason; every other command must accept --json.
const NO_JSON: Record<string, string> = {
  completion: 'prints a shell script',
  'fs-get': "prints the file's own bytes",
  'interaction-chat': 'an interactive terminal conversation',
  login: 'prints one confirmation line',
  lsp: 'speaks the language server protocol on stdio',
  serve: 'a long-running server; its log lines are its own format',
  worker: 'a long-running worker; its log lines are its own format',
};

describe('--json', () => {
  it('is accepted by every command but those that print no JSON, and those call no printJson', () => {
    const missing = leaves(program)
      .filter(({ path }) => NO_JSON[path.join(' ')] === undefined)
      .filter(({ command }) => !command.options.some((o) => o.long === '--json'))
      .map(({ path }) => path.join(' '));
    expect(missing).toEqual([]);
    for (const name of Object.keys(NO_JSON)) {
      expect(topLevel).toContain(name);
      const source = readFileSync(join(root, 'packages/cli/src/commands', `${name}.ts`), 'utf8');
      expect(source, `${name} prints JSON`).not.toMatch(/printJson\(/);
    }
  });

  it('is accepted by mt mcp-config, which prints the same JSON with it as without it', async () => {
    const env = ['--api', 'http://127.0.0.1:9', '--key', 'mt_example'];
    const plain = await mt('mcp-config', ...env);
    const json = await mt('mcp-config', ...env, '--json');
    expect([plain.code, json.code]).toEqual([0, 0]);
    expect(json.stdout).toBe(plain.stdout);
    expect(JSON.parse(json.stdout).mcpServers.maitento.url).toBe('http://127.0.0.1:9/mcp');
  });
});
