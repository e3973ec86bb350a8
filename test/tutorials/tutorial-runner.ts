import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
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

/**
 * The path a file block names on its first line (`// file: PATH`), or undefined. A relative PATH is under the
 * folder the reader stands in (the last `cd` of the blocks before); `~/PATH` is under the reader's home.
 */
export function filePath(block: Block): string | undefined {
  return /^\/\/ file: (\S+)\n/.exec(block.text)?.[1];
}

/** Reads docs/tutorials/NAME. */
export function readTutorial(name: string): Promise<string> {
  return readFile(join(ROOT, 'docs/tutorials', name), 'utf8');
}

/** Options of {@link runTutorial}. */
export interface TutorialOptions {
  /** The folder the first block starts in (the reader's home); each block starts where the one before ended. */
  start: string;
  /** The reader's HOME (`~` of the commands and of `// file: ~/...`). */
  home: string;
  /** Where the folder the reader stands in is kept between blocks. */
  cwdFile: string;
  /** Environment of the commands (beside a clean one, PATH with `mt` first). */
  env: Record<string, string>;
  /** A folder holding the `mt` shim (see {@link writeMtShim}). */
  binDir: string;
  /** Changes a file's text before it is written (hosts and models the test replaces). */
  rewrite?: (path: string, text: string) => string;
  /** Where the shell state (exported variables) is kept between blocks. */
  stateFile: string;
}

/**
 * Writes a `node` executable into `binDir` (the Node.js running the tests, which lives in the clone): the `PATH`
 * of the blocks holds nothing else of the clone, so the `mt` they run is the one the tutorial installed.
 */
export async function writeNodeShim(binDir: string): Promise<void> {
  await mkdir(binDir, { recursive: true });
  await writeFile(join(binDir, 'node'), `#!/bin/sh\nexec "${process.execPath}" "$@"\n`, { mode: 0o755 });
}

/** The folder the reader stands in now (where the last block ended). */
async function currentFolder(options: TutorialOptions): Promise<string> {
  return (await readFile(options.cwdFile, 'utf8').catch(() => options.start)).trim();
}

function runShell(script: string, options: TutorialOptions, cwd: string): Promise<ShellResult> {
  // Every variable a block sets is exported (set -a) and saved, so the next block sees it, as in one terminal;
  // so is the folder it ends in (a `cd` holds for the blocks after it).
  const wrapped = `set -euo pipefail\nset -a\n[ -f "${options.stateFile}" ] && . "${options.stateFile}"\n${script}\nexport -p > "${options.stateFile}"\npwd > "${options.cwdFile}"\n`;
  // Nothing of the clone on PATH (no node_modules/.bin of it): only the test's node, then the system's.
  const path = (process.env.PATH ?? '').split(':').filter((dir) => dir !== '' && !dir.startsWith(ROOT));
  const env = {
    ...cleanEnv(options.home),
    ...options.env,
    PATH: [options.binDir, ...path].join(':'),
  };
  const child = spawn('bash', ['-c', wrapped], { cwd, env });
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
      reject(new Error(`a block did not finish in 90 s:\n${script}\nstdout: ${stdout}\nstderr: ${stderr}`));
      // A block starts `mt` a few times: seconds each on a loaded 2-core machine (30 s was too tight at load 18).
    }, 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ block: script, code, stdout, stderr });
    });
  });
}

/**
 * Runs a tutorial as a reader would: writes each file block where the reader stands and runs each ```sh block
 * with bash, in order, each starting in the folder the one before ended in. Returns what every block did; stops at the first block that exits non-zero.
 */
export async function runTutorial(markdown: string, options: TutorialOptions): Promise<ShellResult[]> {
  const results: ShellResult[] = [];
  for (const block of blocks(markdown)) {
    if (block.info.includes('skip-test')) continue;
    const path = filePath(block);
    const cwd = await currentFolder(options);
    if (path) {
      const target = path.startsWith('~/') ? join(options.home, path.slice(2)) : resolve(cwd, path);
      const text = options.rewrite ? options.rewrite(path, block.text) : block.text;
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, text);
      continue;
    }
    if (block.lang !== 'sh') continue;
    const result = await runShell(block.text, options, cwd);
    results.push(result);
    if (result.code !== 0) break;
  }
  return results;
}

/** Everything the blocks wrote, stdout and stderr, for one assertion. */
export function allOutput(results: ShellResult[]): string {
  return results.map((r) => `$ ${r.block}\n${r.stdout}${r.stderr}`).join('\n');
}
