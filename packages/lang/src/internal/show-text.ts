// Shows a piece of source text inside a message: in backticks, with invisible characters named.

const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff\ud800-\udfff]/;

/** Renders `text` for a message: `` `x` ``, or `U+0000` style names when it holds invisible characters. */
export function showText(text: string): string {
  if (!INVISIBLE.test(text)) return `\`${text}\``;
  const parts: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    parts.push(`U+${code.toString(16).toUpperCase().padStart(4, '0')}`);
  }
  return parts.join(' ');
}
