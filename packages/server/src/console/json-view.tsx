import type { ComponentChildren } from 'preact';

// JSON shown as text with its keys, strings, numbers and literals in classes (colours of console.css): highlighted on
// the server, so no script and no inline style. Every piece is a text node the renderer escapes.

const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;

/** The pieces of `JSON.stringify(value, null, 2)`, each token in a span of its class. */
export function highlightJson(value: unknown): ComponentChildren[] {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  const out: ComponentChildren[] = [];
  let last = 0;
  for (const match of text.matchAll(TOKEN)) {
    const at = match.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    const [whole, string, colon, number, literal] = match;
    if (string !== undefined && colon !== undefined) {
      out.push(<span class="j-key">{string}</span>, colon);
    } else if (string !== undefined) {
      out.push(<span class="j-str">{string}</span>);
    } else if (number !== undefined) {
      out.push(<span class="j-num">{number}</span>);
    } else if (literal !== undefined) {
      out.push(<span class="j-lit">{literal}</span>);
    } else {
      out.push(whole);
    }
    last = at + whole.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** A JSON value in a focusable, labelled region (it may scroll), highlighted. */
export function Json(props: { value: unknown; label: string }) {
  return (
    <section aria-label={props.label} tabindex={0} class="json">
      <pre>{highlightJson(props.value)}</pre>
    </section>
  );
}
