import { formatMtr } from '@maitento/lang/format';
import { parseMtr } from '@maitento/lang/parse';

/** A file's top-level properties: the key and its text, with the comment lines just above it. */
interface Properties {
  leading: string;
  order: string[];
  byKey: Map<string, string>;
}

function properties(text: string): Properties | undefined {
  const { ast, diagnostics } = parseMtr(text, 'merge.mtr');
  if (diagnostics.some((d) => d.severity === 'error')) return undefined;
  const byKey = new Map<string, string>();
  const order: string[] = [];
  const first = ast.assignments[0];
  // The comments above the first property are the file's header, not that property's.
  const leadingEnd = first ? text.lastIndexOf('\n', first.span.start.offset) + 1 : text.length;
  const headerEnd = first ? leadingEnd : text.length;
  let previousEnd = headerEnd;
  for (const assignment of ast.assignments) {
    const key = assignment.key.segments.map((s) => (s.qualifier ? `${s.qualifier}:${s.name}` : s.name)).join('.');
    const chunk = text.slice(previousEnd, assignment.span.end.offset).replace(/^\n+/, '');
    previousEnd = assignment.span.end.offset;
    // A key given twice is not a file this merge understands.
    if (byKey.has(key)) return undefined;
    byKey.set(key, assignment === first ? text.slice(leadingEnd, assignment.span.end.offset) : chunk);
    order.push(key);
  }
  return { leading: text.slice(0, headerEnd), order, byKey };
}

/** The result of merging one file: its new text, or the properties both sides changed. */
export type MergeResult = { text: string } | { conflicts: string[] };

/**
 * A per-property three-way merge of a generated `.mtr` file: `base` is what the last import wrote, `mine` the file
 * as it is now (maybe edited by hand), `theirs` what the document gives now. A property nobody edited takes the
 * document's; a hand edit stays; a property both changed is a conflict. The header comment is the document's.
 */
export function mergeFile(base: string, mine: string, theirs: string): MergeResult {
  const b = properties(base);
  const m = properties(mine);
  const t = properties(theirs);
  if (!b || !m || !t) return { conflicts: ['(the file does not parse, or gives a key twice)'] };
  const keys = [...t.order, ...m.order.filter((k) => !t.byKey.has(k))];
  const chunks: string[] = [];
  const conflicts: string[] = [];
  for (const key of keys) {
    const [was, now, next] = [b.byKey.get(key), m.byKey.get(key), t.byKey.get(key)];
    let take: string | undefined;
    if (now === was) take = next;
    else if (next === was || next === now) take = now;
    else conflicts.push(key);
    if (take !== undefined) chunks.push(take);
  }
  if (conflicts.length > 0) return { conflicts };
  const text = `${t.leading}${chunks.join('\n')}\n`;
  return { text: formatMtr(text, 'merge.mtr').text };
}
