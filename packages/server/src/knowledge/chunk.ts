/** One passage of a document: the headings it is under, joined with " > ", and its text. */
export interface Chunk {
  title: string;
  text: string;
}

/** The longest chunk in characters: a few paragraphs, small enough that a passage answers one question. */
export const MAX_CHUNK_CHARS = 1500;

// Every expression over a document's text is linear: no quantifier next to another that can match the same characters
// (a heading's text is taken apart by `headingText`, not by backtracking), so a hostile line costs its length.
const HEADING = /^#{1,6}[ \t]/;
const FENCE = /^[ \t]{0,3}(```|~~~)/;
const BLANK = (c: string) => c === ' ' || c === '\t';

/** A heading's level and text: `## Title ##` → 2, `Title` (a closing `#` run after a blank is dropped, as CommonMark does). */
function headingText(line: string): { level: number; text: string } {
  let level = 0;
  while (line[level] === '#') level++;
  let end = line.length;
  while (end > level && BLANK(line[end - 1] as string)) end--;
  let hashes = end;
  while (hashes > level && line[hashes - 1] === '#') hashes--;
  if (hashes < end && hashes > level && BLANK(line[hashes - 1] as string)) end = hashes;
  return { level, text: line.slice(level, end).trim() };
}

// A paragraph longer than `max` is cut at sentence ends, and a sentence longer than `max` at `max`.
function pieces(paragraph: string, max: number): string[] {
  if (paragraph.length <= max) return [paragraph];
  const out: string[] = [];
  let current = '';
  for (const sentence of paragraph.split(/(?<=[.!?])\s+/)) {
    for (let start = 0; start < sentence.length; start += max) {
      const part = sentence.slice(start, start + max);
      if (current !== '' && current.length + 1 + part.length > max) {
        out.push(current);
        current = '';
      }
      current = current === '' ? part : `${current} ${part}`;
    }
  }
  if (current !== '') out.push(current);
  return out;
}

/**
 * Splits a document into chunks that follow its structure: a Markdown heading (`#` to `######`, outside fenced
 * code) starts a new chunk whose title is the path of headings above it; within a section, paragraphs (separated
 * by blank lines) are kept whole and put together up to `max` characters. `headings: false` reads `#` lines as
 * text (plain text). `title` is given to chunks before the first heading (a PDF's page).
 */
export function chunkText(text: string, options: { headings?: boolean; title?: string; max?: number } = {}): Chunk[] {
  const max = options.max ?? MAX_CHUNK_CHARS;
  const path: string[] = [];
  const chunks: Chunk[] = [];
  let paragraphs: string[] = [];
  let lines: string[] = [];
  let fenced = false;
  const title = () =>
    path.filter((heading) => heading !== undefined && heading !== '').join(' > ') || (options.title ?? '');
  const endParagraph = () => {
    const paragraph = lines.join('\n').trim();
    lines = [];
    if (paragraph !== '') paragraphs.push(...pieces(paragraph, max));
  };
  const endSection = () => {
    endParagraph();
    let current = '';
    for (const paragraph of paragraphs) {
      if (current !== '' && current.length + 2 + paragraph.length > max) {
        chunks.push({ title: title(), text: current });
        current = '';
      }
      current = current === '' ? paragraph : `${current}\n\n${paragraph}`;
    }
    if (current !== '') chunks.push({ title: title(), text: current });
    paragraphs = [];
  };
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (FENCE.test(line)) fenced = !fenced;
    if (!fenced && options.headings !== false && HEADING.test(line)) {
      endSection();
      const { level, text } = headingText(line);
      path.length = level - 1;
      path[level - 1] = text;
    } else if (!fenced && line.trim() === '') {
      endParagraph();
    } else {
      lines.push(line);
    }
  }
  endSection();
  return chunks;
}
