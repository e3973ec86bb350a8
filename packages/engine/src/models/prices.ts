// The price table (`MT_MODEL_PRICES`, docs/configuration.md): what a model's tokens cost, in US dollars per million,
// so that each model response carries its cost and each run its total (docs/runs.md "Usage and budgets").
import { readFileSync } from 'node:fs';
import { envText } from '../engine/settings.js';
import { engineErrors } from '../errors.js';

/** USD per million input and per million output tokens of one model. */
export interface ModelPrice {
  input: number;
  output: number;
}

/** Prices by model, `provider:name` as agents write it; `provider:*` prices every model of a provider. */
export type PriceTable = ReadonlyMap<string, ModelPrice>;

function invalid(detail: string): Error {
  return engineErrors.create('api:models:prices-invalid', { detail });
}

/**
 * Parses a price table: a JSON object whose keys are models (`provider:name`, or `provider:*`) and whose values are
 * `{ "input": USD per million input tokens, "output": USD per million output tokens }`. Throws
 * `api:models:prices-invalid` on anything else: a wrong price would miscount every run.
 */
export function parsePriceTable(text: string): PriceTable {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw invalid(`not JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalid('a JSON object of models is expected, e.g. {"openai:gpt-4o": {"input": 2.5, "output": 10}}');
  }
  const table = new Map<string, ModelPrice>();
  for (const [model, price] of Object.entries(parsed)) {
    if (!/^[a-z0-9-]+:.+$/.test(model)) throw invalid(`${JSON.stringify(model)} is not provider:name`);
    const { input, output, ...rest } = (price ?? {}) as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) throw invalid(`${model}: unknown field ${extra[0]} (input and output only)`);
    for (const [field, value] of [
      ['input', input],
      ['output', output],
    ] as const) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw invalid(`${model}: ${field} must be a number of USD per million tokens, 0 or more`);
      }
    }
    table.set(model, { input: input as number, output: output as number });
  }
  return table;
}

/**
 * `MT_MODEL_PRICES`: the JSON text of a price table, or the path of a file holding it (a value not starting with
 * `{`); unset: an empty table (every cost 0, tokens still counted).
 */
export function priceTableFromEnv(): PriceTable {
  const raw = envText('MT_MODEL_PRICES');
  if (raw === undefined) return new Map();
  if (raw.startsWith('{')) return parsePriceTable(raw);
  let text: string;
  try {
    text = readFileSync(raw, 'utf8');
  } catch (error) {
    throw invalid(`cannot read the file ${raw}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  return parsePriceTable(text);
}

/** The price of `model` (`provider:name`): its own entry, else its provider's `provider:*`, else undefined. */
export function priceOf(table: PriceTable, model: string): ModelPrice | undefined {
  const own = table.get(model);
  if (own !== undefined) return own;
  const at = model.indexOf(':');
  return at < 0 ? undefined : table.get(`${model.slice(0, at)}:*`);
}

/**
 * What `usage` of `model` cost in USD, or null when the table has no price for it. Tokens a provider did not report
 * count as 0. Rounded to 1e-10 USD, so that sums of small costs stay exact in the run's numeric total.
 */
export function costOf(
  table: PriceTable,
  model: string,
  usage: { inputTokens: number | null; outputTokens: number | null },
): number | null {
  const price = priceOf(table, model);
  if (price === undefined) return null;
  const usd = ((usage.inputTokens ?? 0) * price.input + (usage.outputTokens ?? 0) * price.output) / 1_000_000;
  return Math.round(usd * 1e10) / 1e10;
}
