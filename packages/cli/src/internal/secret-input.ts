import { cliErrors } from '../errors.js';
import { ExitCode } from './exit-codes.js';
import { CommandExit } from './output.js';

/**
 * A secret value (or key) from `given`, else from stdin: typed without echo on a terminal, or read
 * whole from a pipe with one trailing newline removed. The value is never printed.
 */
export async function readSecretValue(given: string | undefined, what: string, flag: string): Promise<string> {
  let value = given;
  if (value === undefined) {
    value = process.stdin.isTTY ? await promptHidden(`${what}: `) : stripNewline(await readAll());
  }
  if (value === '') {
    throw cliErrors.create('api:cli:value-missing', {
      what,
      hint: `pass ${flag}, or pipe it on stdin (for example \`printf %s "$VALUE" | mt ...\`)`,
    });
  }
  return value;
}

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

function stripNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/** Reads one line from the terminal in raw mode, echoing nothing. */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  // Echo goes off before the prompt shows, so nothing typed (or pasted) early is ever echoed.
  stdin.setRawMode(true);
  process.stderr.write(question);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') {
          finish();
          resolve(value);
          return;
        }
        if (char === '\u0003') {
          finish();
          reject(new CommandExit(ExitCode.UserError));
          return;
        }
        value = char === '\u007f' || char === '\b' ? value.slice(0, -1) : value + char;
      }
    };
    stdin.on('data', onData);
  });
}
