import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatMtr } from '@maitento/lang';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

function mtrFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return mtrFiles(path);
    return entry.name.endsWith('.mtr') ? [path] : [];
  });
}

describe('the example config repo at the top level', () => {
  const files = ['connectors', 'external-operations', 'agents', 'interactions'].flatMap((d) => mtrFiles(join(root, d)));

  it('holds the examples the product promises', () => {
    const names = files.map((f) => relative(root, f)).sort();
    expect(names).toEqual(
      expect.arrayContaining([
        'connectors/open-api/open-meteo-forecast.mtr',
        'external-operations/open-api/current-weather.mtr',
        'external-operations/open-api/refund-order.mtr',
        'interactions/one-shot/ask-handbook.mtr',
        'interactions/one-shot/support-any-shop.mtr',
        // One file system id for three tools (docs/file-systems.md).
        'connectors/open-api/notes-list-files.mtr',
        'connectors/open-api/notes-read-file.mtr',
        'connectors/open-api/notes-write-file.mtr',
        'external-operations/open-api/list-files.mtr',
        'external-operations/open-api/read-file.mtr',
        'external-operations/open-api/write-file.mtr',
        'agents/note-keeper.mtr',
        'interactions/one-shot/keep-notes.mtr',
        // Agents as tools (docs/runs.md): a triage agent with a billing sub-agent.
        'agents/triage-agent.mtr',
        'agents/billing-agent.mtr',
        'interactions/one-shot/triage.mtr',
        // An answer in a declared shape (result.schema, docs/runs.md).
        'agents/order-checker.mtr',
        'interactions/one-shot/check-refund.mtr',
        // A conversation (docs/runs.md "Conversations").
        'interactions/conversation/support-chat.mtr',
      ]),
    );
  });

  it('is in the canonical layout of mt fmt, so `mt fmt --check` passes on a copy of it', () => {
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const formatted = formatMtr(text, relative(root, file));
      expect(formatted.diagnostics, relative(root, file)).toEqual([]);
      expect(formatted.text, relative(root, file)).toBe(text);
    }
  });
});
