import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cleanEnv, ROOT } from '../e2e/support/harness.js';

/** One fenced block of a tutorial: its language, the words after it, and its text. */
export interface Block {
  lang: string;
  info: string;
  text: string;
}

/** What one runnable ```sh block did. */
export interface ShellResult {
  block: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The fenced blocks of a Markdown file. Runnable ones: ```sh blocks (commands, run in order) unless their
 * info says `skip-test`, and blocks whose first line is `// file: PATH` (written into the config repo).
 */
export function blocks(markdown: string): Block[] {
  const found: Block[] = [];
  for (const m of markdown.matchAll(/^```(\w*)([^\n]*)\n([\s\S]*?)^```\s*$/gm)) {
    found.push({ lang: m[1], info: m[2].trim(), text: m[3] });
  }
  return found;
}

/** The path a file block names on its first line (`// file: PATH`), or undefined. */
export function filePath(block: Block): string | undefined {
  return /^\/\/ file: (\S+)\n/.exec(block.text)?.[1];
}

/** Reads docs/tutorials/NAME. */
export function readTutorial(name: string): Promise<string> {
  return readFile(join(ROOT, 'docs/tutorials', name), 'utf8');
}

/** Options of {@link runTutorial}. */
export interface TutorialOptions {
  /** The config repo the files are written to and the commands run in. */
  repo: string;
  home: string;
  /** Environment of the commands (beside a clean one, PATH with `mt` first). */
  env: Record<string, string>;
  /** A folder holding the `mt` shim (see {@link writeMtShim}). */
  binDir: string;
  /** Changes a file's text before it is written (hosts and models the test replaces). */
  rewrite?: (path: string, text: string) => string;
  /** Where the shell state (exported variables) is kept between blocks. */
  stateFile: string;
}

/** Writes an `mt` executable into `binDir` that runs this repository's CLI with the current Node.js. */
export async function writeMtShim(binDir: string): Promise<void> {
  await mkdir(binDir, { recursive: true });
  const shim = `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'packages/cli/bin/mt.js')}" "$@"\n`;
  await writeFile(join(binDir, 'mt'), shim, { mode: 0o755 });
  await writeFile(join(binDir, 'node'), `#!/bin/sh\nexec "${process.execPath}" "$@"\n`, { mode: 0o755 });
}

function runShell(script: string, options: TutorialOptions): Promise<ShellResult> {
  // Every variable a block sets is exported (set -a) and saved, so the next block sees it, as in one terminal.
  const wrapped = `set -euo pipefail\nset -a\n[ -f "${options.stateFile}" ] && . "${options.stateFile}"\n${script}\nexport -p > "${options.stateFile}"\n`;
  const env = {
    ...cleanEnv(options.home),
    ...options.env,
    PATH: `${options.binDir}:${process.env.PATH ?? ''}`,
  };
  const child = spawn('bash', ['-c', wrapped], { cwd: options.repo, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`a block did not finish in 30 s:\n${script}\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ block: script, code, stdout, stderr });
    });
  });
}

/**
 * Runs a tutorial as a reader would: writes each file block into the repo and runs each ```sh block with
 * bash, in order. Returns what every block did; stops at the first block that exits non-zero.
 */
export async function runTutorial(markdown: string, options: TutorialOptions): Promise<ShellResult[]> {
  const results: ShellResult[] = [];
  for (const block of blocks(markdown)) {
    if (block.info.includes('skip-test')) continue;
    const path = filePath(block);
    if (path) {
      const text = options.rewrite ? options.rewrite(path, block.text) : block.text;
      await mkdir(dirname(join(options.repo, path)), { recursive: true });
      await writeFile(join(options.repo, path), text);
      continue;
    }
    if (block.lang !== 'sh') continue;
    const result = await runShell(block.text, options);
    results.push(result);
    if (result.code !== 0) break;
  }
  return results;
}

/** Everything the blocks wrote, stdout and stderr, for one assertion. */
export function allOutput(results: ShellResult[]): string {
  return results.map((r) => `$ ${r.block}\n${r.stdout}${r.stderr}`).join('\n');
}
