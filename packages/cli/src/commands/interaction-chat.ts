import { createInterface } from 'node:readline/promises';
import { path } from '@maitento/sdk/client';
import { type ApiFlags, addConnectionOptions, withClient } from '../internal/api.js';
import { ExitCode } from '../internal/exit-codes.js';
import { CommandExit } from '../internal/output.js';
import { collectInput, collectJsonInput } from '../internal/run-inputs.js';
import { describeEvent, describeWaiting, resultText } from '../internal/run-output.js';
import type { RegisterCommand } from './index.js';

interface ChatFlags extends ApiFlags {
  input?: Record<string, unknown>;
  inputJson?: Record<string, unknown>;
  version?: number;
}

// What the terminal shows of an event while chatting: the tool calls and their outcomes as they happen.
const SHOWN = new Set(['tool-call-started', 'tool-result', 'approval-answered', 'result-invalid', 'history-trimmed']);

/**
 * `mt interaction-chat NAME [--input NAME=VALUE...]`: a conversation in the terminal. Starts a run of a conversation
 * interaction, prints each reply, reads the next message from the terminal, shows tool calls as they happen and asks
 * about each approval inline. An empty line or end of input leaves the run waiting (it ends at its maxIdle).
 */
export const register: RegisterCommand = (program, io) => {
  const command = program
    .command('interaction-chat')
    .description('Talk with a conversation interaction in the terminal: replies, tool calls and approvals inline')
    .argument('<name>', 'the interaction name (interactions/conversation/<name>.mtr)')
    .option('--input <name=value>', 'an input as text (repeat it)', collectInput)
    .option('--input-json <name=json>', 'an input as a JSON value (repeat it)', collectJsonInput)
    .addHelpText(
      'after',
      `
Type a message and Enter after each reply; an empty line or Ctrl-D leaves the conversation waiting (it ends
at its maxIdle). A call that needs approval is shown with its arguments: y approves it, anything else is the
reason it is rejected with. Exit codes: 0 the conversation was left or ended, 1 an error or a run that Failed
or was Cancelled, 2 usage.`,
    );
  addConnectionOptions(command).action(async (name: string, flags: ChatFlags) => {
    await withClient(io, flags, async (client) => {
      const terminal = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
      let closed = false;
      terminal.on('close', () => {
        closed = true;
      });
      const ask = async (question: string): Promise<string | undefined> => {
        if (closed) return undefined;
        try {
          return await terminal.question(question);
        } catch {
          return undefined;
        }
      };
      try {
        const run = await client.interactionRuns.start(name, { inputs: { ...flags.input, ...flags.inputJson } });
        io.err(`conversation ${run.id} with ${run.interaction.name} version ${run.interaction.version}`);
        const asked = new Set<string>();
        // Asks about the approval a run (the conversation or a child of it) waits on, once; false on end of input.
        const answerApproval = async (runId: string): Promise<boolean> => {
          const waiting = await client.interactionRuns.get(runId);
          const approval = waiting.pendingApproval;
          if (waiting.status !== 'PendingApproval' || approval === null || asked.has(approval.id)) return true;
          asked.add(approval.id);
          io.err(describeWaiting(waiting).split('\nAnswer it with:')[0] ?? '');
          const answer = (await ask('Approve this call? y to approve, or a reason to reject: '))?.trim();
          if (answer === undefined) return false;
          if (answer.toLowerCase() === 'y' || answer.toLowerCase() === 'yes') {
            await client.interactionRuns.approve(runId, { approvalId: approval.id });
          } else {
            const reason = answer === '' ? 'Rejected in the terminal' : answer;
            await client.interactionRuns.reject(runId, { approvalId: approval.id, reason });
          }
          return true;
        };
        // A call that handed a task to an agent: its child run's calls, indented, to its end, each approval it asks
        // for asked here (the conversation's own stream has no event while a child waits for a person).
        const followChild = async (childId: string, indent: string): Promise<boolean> => {
          for await (const event of client.interactionRuns.events(childId)) {
            if (SHOWN.has(event.type)) io.err(`${indent}${describeEvent(event).replaceAll('\n', `\n${indent}`)}`);
            if (event.type === 'run-waiting' && !(await answerApproval(childId))) return false;
            const child = event.type === 'tool-call-started' ? event.data.childRunId : undefined;
            if (typeof child === 'string' && !(await followChild(child, `${indent}    `))) return false;
          }
          return true;
        };
        for await (const event of client.interactionRuns.events(run.id)) {
          if (SHOWN.has(event.type)) io.err(describeEvent(event));
          const child = event.type === 'tool-call-started' ? event.data.childRunId : undefined;
          if (typeof child === 'string' && !(await followChild(child, '    '))) break;
          if (event.type === 'run-waiting') {
            if (!(await answerApproval(run.id))) break;
          } else if (event.type === 'input-requested') {
            io.out(`${waitingReply(event.data)}\n`);
            const text = (await ask('you> '))?.trim();
            if (text === undefined || text === '') {
              io.err(
                `left conversation ${run.id} waiting for a message; it ends at its maxIdle ` +
                  `(or \`mt interaction-cancel ${run.id}\`)`,
              );
              return;
            }
            await client.request({ method: 'POST', path: path`/v1/runs/${run.id}/messages`, body: { text } });
          } else if (event.type === 'conversation-ended') {
            io.err('the conversation ended: no message came within its maxIdle');
          } else if (event.type === 'run-completed') {
            io.out(resultText(await client.interactionRuns.get(run.id)));
          } else if (event.type === 'run-failed' || event.type === 'run-cancelled') {
            io.err(describeEvent(event));
            throw new CommandExit(ExitCode.UserError);
          }
        }
      } finally {
        terminal.close();
      }
    });
  });
};

// The reply an `input-requested` event carries, as the terminal shows it (a structured one as indented JSON).
function waitingReply(data: Record<string, unknown>): string {
  const result = typeof data.result === 'string' ? data.result : '';
  if (data.structured !== true) return result;
  try {
    return JSON.stringify(JSON.parse(result), null, 2);
  } catch {
    return result;
  }
}
