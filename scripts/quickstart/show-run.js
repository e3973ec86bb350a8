// Prints a run's stored steps (its events) in words, each once, whoever asks first.
import { detail, indentJson, say } from './terminal.js';

function short(text, max = 300) {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

/** Who answered: the key's name, and for `bootstrap` what that name is (the demo answers with that key). */
function approver(by) {
  if (by?.keyName === undefined) return 'a person';
  if (by.keyName === 'bootstrap')
    return "bootstrap (the name of the first admin key, made at the server's first start)";
  return by.keyName;
}

function describe(event) {
  const data = event.data;
  switch (event.type) {
    case 'run-started':
      detail(
        `Run started: interaction ${data.interaction.name} version ${data.interaction.version}.` +
          (data.interaction.version > 1
            ? " (A deploy that changes a resource stores it as a new version; the demo deploys at every start, and its copy of the config points at the orders API on this start's port.)"
            : ''),
      );
      break;
    case 'model-response': {
      const who = data.scripted ? 'The agent (scripted stand-in)' : `The agent (${data.model})`;
      if (data.toolCalls.length === 0) break;
      for (const call of data.toolCalls) {
        detail(`${who} calls the tool ${call.name} with:`);
        say(indentJson(call.arguments));
      }
      break;
    }
    case 'tool-result':
      if (data.ok) detail(`Tool ${data.name} answered ${data.status}: ${short(data.result)}`);
      else detail(`Tool ${data.name} did not succeed (${data.code ?? data.status}): ${short(data.result)}`);
      break;
    case 'approval-requested':
      detail(
        `The tool ${data.approval.functionName} needs a person's approval: the run waits, the call is NOT made yet.`,
      );
      break;
    case 'approval-answered':
      detail(
        data.decision === 'approve'
          ? `Approved by ${approver(data.by)}: the exact call shown is made now.`
          : `Rejected (${data.reason}): the call is not made, and the agent is told why.`,
      );
      break;
    case 'run-completed':
      detail('The agent answers the customer:');
      detail(`  "${short(data.result, 1000)}"`);
      break;
    case 'run-failed':
      detail(`The run failed: ${data.code}: ${data.message}`);
      break;
    case 'run-cancelled':
      detail('The run was cancelled.');
      break;
    default:
      break;
  }
}

/** Keeps track of which events of a run were printed, so the live stream and a catch-up never repeat one. */
export function createRunPrinter(mt) {
  let printed = 0;
  const print = (event) => {
    if (event.seq <= printed) return;
    printed = event.seq;
    describe(event);
  };
  return {
    print,
    /** Prints every stored event not printed yet (one request). */
    async catchUp(runId) {
      for (const event of await mt.interactionRuns.listEvents(runId, { after: printed })) print(event);
    },
  };
}
