import { didYouMean } from '../diagnostics/did-you-mean.js';
import type { CompileContext } from './compile-context.js';
import { didYouMeanText, type Reporter } from './report.js';
import { MAX_TRIGGER_BODY } from './kind-shapes.js';
import type { Interaction, Schedule, Trigger } from './resources.js';
import { cronProblem, isTimeZone, knownTimeZones } from './schedule-time.js';
import { spanOf, type ValueTree } from './value-tree.js';

/** A schedule's own checks: its cron expression (read by croner) and its IANA time zone. */
export function checkScheduleOwn(schedule: Schedule, tree: ValueTree, reporter: Reporter): void {
  const problem = cronProblem(schedule.cron);
  if (problem !== undefined) {
    reporter.report('mtr:schedule:cron', { detail: problem }, tree.file, spanOf(tree, ['cron']));
  }
  if (!isTimeZone(schedule.timezone)) {
    const guess = didYouMean(schedule.timezone, knownTimeZones());
    reporter.report(
      'mtr:schedule:timezone',
      { zone: JSON.stringify(schedule.timezone), suggestion: guess === undefined ? '' : `; ${didYouMeanText(guess)}` },
      tree.file,
      spanOf(tree, ['timezone']),
    );
  }
}

const isEmpty = (value: unknown) => value === undefined || value === null || value === '';

/** The run inputs `interaction` requires (with nothing to fall back on), each with what it is. */
function requiredInputs(interaction: Interaction): { name: string; what: string }[] {
  const out: { name: string; what: string }[] = [];
  for (const p of interaction.inputs.prompts) {
    if (p.required && p.default === undefined) out.push({ name: p.name, what: 'a prompt input' });
  }
  for (const b of interaction.inputs.functions.binding) {
    if (b.required && b.default === undefined)
      out.push({ name: b.name, what: `the value of ${b.target} of ${b.function}` });
  }
  for (const a of interaction.inputs.functions.auth) {
    if (a.required && a.secret === undefined)
      out.push({ name: a.name, what: `the id of the secret ${a.function} sends` });
  }
  return out;
}

// The names `given` against the interaction's run inputs: none unknown (did-you-mean), every required one there.
function checkInputsOf(
  kind: 'schedule' | 'trigger',
  interactionName: string,
  given: Record<string, unknown>,
  tree: ValueTree,
  ctx: CompileContext,
): void {
  const interaction = ctx.interactions.get(interactionName)?.resource;
  if (interaction === undefined) return;
  const { prompts } = interaction.inputs;
  const { binding, auth } = interaction.inputs.functions;
  const known = [...prompts, ...binding, ...auth].map((input) => input.name);
  for (const name of Object.keys(given)) {
    if (known.includes(name)) continue;
    const guess = didYouMean(name, known);
    ctx.reporter.report(
      kind === 'schedule' ? 'mtr:schedule:input-unknown' : 'mtr:trigger:input-unknown',
      {
        interaction: interaction.name,
        name,
        suggestion: guess === undefined ? '' : `; ${didYouMeanText(guess)}`,
        known: known.length === 0 ? '(none)' : known.join(', '),
      },
      tree.file,
      spanOf(tree, ['inputs', name]),
    );
  }
  for (const { name, what } of requiredInputs(interaction)) {
    if (!isEmpty(given[name])) continue;
    ctx.reporter.report(
      kind === 'schedule' ? 'mtr:schedule:input-required' : 'mtr:trigger:input-required',
      { name, interaction: interaction.name, what },
      tree.file,
      spanOf(tree, tree.root.inputs === undefined ? ['interaction'] : ['inputs']),
    );
  }
}

/**
 * A schedule's inputs against its interaction's run inputs (the interaction itself is resolved by its `@ref`): no
 * unknown name, every required input given, as a start request of the same inputs would be checked, at deploy.
 */
export function checkScheduleInputs(schedule: Schedule, tree: ValueTree, ctx: CompileContext): void {
  checkInputsOf('schedule', schedule.interaction, schedule.inputs, tree, ctx);
}

/**
 * A trigger's own checks: what starts it (an inbound webhook's `verify`, or `on`: another interaction's run ending;
 * exactly one), and its body limit.
 */
export function checkTriggerOwn(trigger: Trigger, tree: ValueTree, reporter: Reporter): void {
  const { root } = tree;
  if (root.verify === undefined && root.on === undefined) {
    reporter.report(
      'mtr:trigger:source',
      { detail: 'gives neither verify (an inbound webhook) nor on (another run ending)' },
      tree.file,
      spanOf(tree, ['interaction']),
    );
  } else if (root.verify !== undefined && root.on !== undefined) {
    reporter.report(
      'mtr:trigger:source',
      { detail: 'gives both verify (an inbound webhook) and on (another run ending); one trigger is one of them' },
      tree.file,
      spanOf(tree, ['on']),
    );
  } else if (root.on !== undefined) {
    for (const key of ['eventId', 'maxBodyBytes'] as const) {
      if (root[key] === undefined) continue;
      reporter.report(
        'mtr:trigger:source',
        {
          detail: `gives ${key}, which only an inbound webhook has; a run ending has no payload to limit or id to read`,
        },
        tree.file,
        spanOf(tree, [key]),
      );
    }
  }
  const max = trigger.maxBodyBytes;
  if (!Number.isInteger(max) || max < 1 || max > MAX_TRIGGER_BODY) {
    reporter.report('mtr:trigger:max-body', { value: String(max) }, tree.file, spanOf(tree, ['maxBodyBytes']));
  }
}

/**
 * A trigger's inputs against its interaction's: each mapped name is a run input, and each required one is mapped
 * (a payload without it refuses the delivery, at run time; one never mapped would refuse them all).
 */
export function checkTriggerInputs(trigger: Trigger, tree: ValueTree, ctx: CompileContext): void {
  checkInputsOf('trigger', trigger.interaction, trigger.inputs, tree, ctx);
}
