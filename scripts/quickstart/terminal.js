// What the demo prints, and the questions it asks, for someone who has never seen Maitento.
import { createInterface } from 'node:readline';

const tty = process.stdout.isTTY === true;
const bold = (text) => (tty ? `\x1b[1m${text}\x1b[0m` : text);
const dim = (text) => (tty ? `\x1b[2m${text}\x1b[0m` : text);

/** Prints lines on stdout. */
export function say(...lines) {
  for (const line of lines) process.stdout.write(`${line}\n`);
}

/** Prints a numbered step heading. */
export function step(number, total, title) {
  say('', bold(`[${number}/${total}] ${title}`));
}

/** Prints a detail line under a step. */
export function detail(text) {
  say(`      ${text}`);
}

/** Prints a line in a quieter colour (explanations). */
export function note(text) {
  say(dim(`      ${text}`));
}

/**
 * Shows, while something slow goes on, how long it has been running: a ticking counter on a terminal, a
 * line every 10 s otherwise (CI logs). Returns `stop()`.
 */
export function startProgress(label) {
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  let lastLine = 0;
  const timer = setInterval(() => {
    const s = seconds();
    if (tty) process.stdout.write(`\r      ${label}... ${s} s `);
    else if (s - lastLine >= 10) {
      lastLine = s;
      say(`      ${label}... still working (${s} s)`);
    }
  }, 1000);
  return {
    stop() {
      clearInterval(timer);
      if (tty && seconds() >= 1) process.stdout.write('\r\x1b[K');
      return seconds();
    },
  };
}

/** Runs `work` with {@link startProgress} shown while it runs. */
export async function withProgress(label, work) {
  const progress = startProgress(label);
  try {
    return await work();
  } finally {
    progress.stop();
  }
}

let reader;

/** One reader of stdin for the whole session: piped answers arrive together, and none may be lost. */
function lineReader() {
  if (reader) return reader;
  const lines = [];
  const waiting = [];
  let ended = false;
  const rl = createInterface({ input: process.stdin });
  // Ctrl-C at a question stops the demo (readline would otherwise only pause its input).
  rl.on('SIGINT', () => process.emit('SIGINT'));
  rl.on('line', (line) => (waiting.length > 0 ? waiting.shift()(line) : lines.push(line)));
  rl.on('close', () => {
    ended = true;
    for (const resolve of waiting.splice(0)) resolve(undefined);
  });
  reader = {
    // `signal` takes the question back (someone answered elsewhere): resolves with null, and a line typed
    // later goes to the next question instead of being lost.
    next: (signal) => {
      if (lines.length > 0) return Promise.resolve(lines.shift());
      if (ended) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        if (signal?.aborted) return resolve(null);
        const onAbort = () => {
          const at = waiting.indexOf(take);
          if (at >= 0) waiting.splice(at, 1);
          resolve(null);
        };
        const take = (line) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(line);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiting.push(take);
      });
    },
    close: () => rl.close(),
  };
  return reader;
}

/**
 * Asks a question on the terminal; resolves with the answer, `undefined` when the input ended, or `null` when
 * `signal` aborted the question first (the prompt's line is then ended, so what follows starts on its own).
 */
export async function ask(question, signal) {
  process.stdout.write(question);
  const answer = await lineReader().next(signal);
  if (answer === null) process.stdout.write('\n');
  else if (!process.stdin.isTTY && answer !== undefined) process.stdout.write(`${answer}\n`);
  return answer;
}

/** Stops reading stdin (so the process can exit). */
export function stopAsking() {
  reader?.close();
}

/** Formats a JSON value on a few indented lines. */
export function indentJson(value, indent = '        ') {
  return JSON.stringify(value, null, 2)
    .split('\n')
    .map((line) => indent + line)
    .join('\n');
}
