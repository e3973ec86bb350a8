import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ROOT } from '../e2e/support/harness.js';

/** One fenced block of a tutorial: its language, the words after it, and its text. */
export interface Block {
  lang: string;
  info: string;
  text: string;
}

/** What one runnable ```sh block did. */
export interface ShellResult {
  block: string;
  /** The terminal it ran in: `work` (the reader's working terminal) or the name of another one. */
  terminal: string;
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
 * The terminal a ```sh block runs in: `terminal=NAME` in its info names a terminal of its own (the server's, the
 * orders API's) where a long-running process starts; without it, the reader's working terminal, `work`.
 */
export function terminalOf(block: Block): string {
  return /(?:^|\s)terminal=(\S+)/.exec(block.info)?.[1] ?? 'work';
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

/** Options of a {@link Reader}. */
export interface ReaderOptions {
  /** The reader's HOME (`~` of the commands and of `// file: ~/...`), where the working terminal starts. */
  home: string;
  /** A folder of the test's own, for the working terminal's state between blocks. */
  stateDir: string;
  /** The machine's PATH a new terminal starts with (its own Node.js first, nothing of the clone). */
  path: string;
  /** Changes a file's text before it is written (hosts and models the test replaces). */
  rewriteFile?: (path: string, text: string) => string;
  /** Changes a command block's text before it runs (ports, `<your clone>`, what the reader copies from output). */
  rewriteCommand?: (text: string, reader: Reader) => string;
  /** More environment of a new terminal of this name (what the test changes for it, and says why). */
  terminalEnv?: (terminal: string) => Record<string, string>;
}

interface Background {
  child: ChildProcess;
  output: () => string;
  exited: Promise<void>;
}

/**
 * A reader going through the tutorials in order: a working terminal whose state (the folder it stands in, the
 * variables set) carries from block to block and from one tutorial to the next, and other terminals, each a fresh
 * shell, where a block starts a long-running process (`terminal=NAME`). Every shell is `bash -l` with an environment
 * of HOME and the machine's PATH and nothing else: what a block needs, the tutorial must tell the reader to set.
 */
export class Reader {
  private readonly terminals = new Map<string, Background>();
  private readonly outputs = new Map<string, string>();

  constructor(private readonly options: ReaderOptions) {}

  /** Everything a terminal printed so far (its processes' output, the last one's included). */
  output(terminal: string): string {
    const running = this.terminals.get(terminal);
    return (this.outputs.get(terminal) ?? '') + (running?.output() ?? '');
  }

  private get cwdFile(): string {
    return join(this.options.stateDir, 'cwd');
  }

  private get stateFile(): string {
    return join(this.options.stateDir, 'shell-state');
  }

  /** The folder the working terminal stands in now (where its last block ended). */
  private async currentFolder(): Promise<string> {
    return (await readFile(this.cwdFile, 'utf8').catch(() => this.options.home)).trim();
  }

  private freshEnv(terminal: string): Record<string, string> {
    return { HOME: this.options.home, PATH: this.options.path, ...this.options.terminalEnv?.(terminal) };
  }

  /** Runs a block of the working terminal: bash where the block before ended, with the variables it left. */
  private runWorking(script: string, cwd: string): Promise<ShellResult> {
    // Every variable a block sets is exported (set -a) and saved, so the next block sees it, as in one terminal;
    // so is the folder it ends in (a `cd` holds for the blocks after it).
    const wrapped = `set -euo pipefail\nset -a\n[ -f "${this.stateFile}" ] && . "${this.stateFile}"\n${script}\nexport -p > "${this.stateFile}"\npwd > "${this.cwdFile}"\n`;
    // No stdin (a command that asks gets end-of-file, not a wait): the tutorials pass what they type as options.
    const child = spawn('bash', ['-lc', wrapped], {
      cwd,
      env: this.freshEnv('work'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
        resolve({ block: script, terminal: 'work', code, stdout, stderr });
      });
    });
  }

  /** Ctrl-C in a terminal: SIGINT to its process group, then waits for it to end (SIGKILL after 20 s). */
  async stop(terminal: string): Promise<void> {
    const running = this.terminals.get(terminal);
    if (running === undefined) return;
    this.terminals.delete(terminal);
    this.outputs.set(terminal, (this.outputs.get(terminal) ?? '') + running.output());
    const pid = running.child.pid;
    if (pid === undefined || running.child.exitCode !== null || running.child.signalCode !== null) return;
    process.kill(-pid, 'SIGINT');
    const killer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 20_000);
    await running.exited;
    clearTimeout(killer);
  }

  /** Stops every terminal's process (the end of the reading). */
  async stopAll(): Promise<void> {
    for (const terminal of [...this.terminals.keys()]) await this.stop(terminal);
  }

  /**
   * Runs a block in a terminal of its own: a fresh shell in HOME, the process before it in that terminal stopped
   * first (Ctrl-C), and the block done once its process says `listening on` (it keeps running).
   */
  private async runBackground(script: string, terminal: string): Promise<ShellResult> {
    await this.stop(terminal);
    const child = spawn('bash', ['-lc', `set -euo pipefail\n${script}`], {
      cwd: this.options.home,
      env: this.freshEnv(terminal),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let log = '';
    child.stdout?.on('data', (c: Buffer) => {
      log += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
    });
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    this.terminals.set(terminal, { child, output: () => log, exited });
    const started = performance.now();
    // Every wait has a deadline: 90 s for a server to start on a loaded machine.
    while (!/listening on /.test(log)) {
      if (child.exitCode !== null || child.signalCode !== null) {
        return { block: script, terminal, code: child.exitCode ?? 1, stdout: log, stderr: '' };
      }
      if (performance.now() - started > 90_000) {
        await this.stop(terminal);
        return { block: script, terminal, code: 124, stdout: log, stderr: 'did not say "listening on" in 90 s' };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    return { block: script, terminal, code: 0, stdout: log, stderr: '' };
  }

  /**
   * Reads a tutorial as a reader would: writes each file block where the working terminal stands and runs each
   * ```sh block in order, in its terminal. Returns what every block did; stops at the first that fails.
   */
  async read(markdown: string): Promise<ShellResult[]> {
    const results: ShellResult[] = [];
    for (const block of blocks(markdown)) {
      if (block.info.includes('skip-test')) continue;
      const path = filePath(block);
      const cwd = await this.currentFolder();
      if (path) {
        const target = path.startsWith('~/') ? join(this.options.home, path.slice(2)) : resolve(cwd, path);
        const text = this.options.rewriteFile ? this.options.rewriteFile(path, block.text) : block.text;
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, text);
        continue;
      }
      if (block.lang !== 'sh') continue;
      const script = this.options.rewriteCommand ? this.options.rewriteCommand(block.text, this) : block.text;
      const terminal = terminalOf(block);
      const result =
        terminal === 'work' ? await this.runWorking(script, cwd) : await this.runBackground(script, terminal);
      results.push(result);
      if (result.code !== 0) break;
    }
    return results;
  }
}

/** Everything the blocks wrote, stdout and stderr, for one assertion. */
export function allOutput(results: ShellResult[]): string {
  return results
    .map((r) => `$ ${r.terminal === 'work' ? '' : `[terminal ${r.terminal}] `}${r.block}\n${r.stdout}${r.stderr}`)
    .join('\n');
}
