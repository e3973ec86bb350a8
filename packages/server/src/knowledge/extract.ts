import type { FormatCallback } from 'html-to-text';
import { serverErrors } from '../errors.js';
import { type Chunk, chunkText } from './chunk.js';

/** The content types a knowledge base takes, as sent in Content-Type (without parameters). */
export const DOCUMENT_TYPES = ['text/plain', 'text/markdown', 'text/html', 'application/pdf'] as const;

/** One of {@link DOCUMENT_TYPES}. */
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

// An HTML heading becomes a Markdown one, so the chunker follows HTML's structure as it follows Markdown's.
const heading: FormatCallback = (elem, walk, builder) => {
  const level = Number(elem.name?.slice(1)) || 1;
  builder.openBlock({ leadingLineBreaks: 2 });
  builder.addLiteral(`${'#'.repeat(level)} `);
  walk(elem.children, builder);
  builder.closeBlock({ trailingLineBreaks: 2 });
};

const HTML_OPTIONS = {
  wordwrap: false as const,
  formatters: { heading },
  selectors: [
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, format: 'heading' })),
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
  ],
};

/** What reading one document may produce: at most `pages` PDF pages and `textChars` characters of text. */
export interface ExtractLimits {
  pages: number;
  textChars: number;
}

function tooComplex(name: string, reason: string) {
  return serverErrors.create('api:knowledge:document-too-complex', { name, reason });
}

function unreadable(name: string, type: string, error: unknown) {
  const reason = error instanceof Error ? error.message : String(error);
  return serverErrors.create('api:knowledge:unreadable', { name, type, reason });
}

// A PDF's text page by page: each page is a section titled with its number.
async function pdfChunks(name: string, body: Buffer, limits: ExtractLimits): Promise<Chunk[]> {
  // unpdf and html-to-text are imported on a document's first use, not when the server starts.
  const { extractText, getDocumentProxy } = await import('unpdf');
  let pages: string[];
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(body));
  } catch (error) {
    throw unreadable(name, 'application/pdf', error);
  }
  try {
    if (pdf.numPages > limits.pages) throw tooComplex(name, `it has ${pdf.numPages} pages, more than ${limits.pages}`);
    try {
      pages = (await extractText(pdf, { mergePages: false })).text;
    } catch (error) {
      throw unreadable(name, 'application/pdf', error);
    }
  } finally {
    // The thread is reused for the next document: nothing of this one stays behind.
    await pdf.loadingTask.destroy();
  }
  checkText(name, pages.join(''), limits);
  return pages.flatMap((page, i) => chunkText(page, { headings: false, title: `Page ${i + 1}` }));
}

function checkText(name: string, text: string, limits: ExtractLimits): void {
  if (text.length > limits.textChars) {
    throw tooComplex(name, `its text is longer than ${limits.textChars} characters`);
  }
}

/**
 * The chunks of document `name`: its text taken from `body` by `type` (PDF through unpdf, HTML through
 * html-to-text, Markdown and plain text as they are) and split by {@link chunkText}. A body that cannot be read
 * is `api:knowledge:unreadable`, one with no text `api:knowledge:empty`, one over `limits`
 * `api:knowledge:document-too-complex`. This runs in the extraction thread (knowledge/budget.ts), which bounds its
 * time and memory; the server calls {@link documentChunks} there.
 */
export async function extractChunks(
  name: string,
  type: DocumentType,
  body: Buffer,
  limits: ExtractLimits,
): Promise<Chunk[]> {
  let chunks: Chunk[];
  if (type === 'application/pdf') {
    chunks = await pdfChunks(name, body, limits);
  } else {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch (error) {
      throw unreadable(name, type, error);
    }
    if (text.includes('\u0000')) throw unreadable(name, type, new Error('the text holds a NUL character'));
    if (type === 'text/html') {
      const { convert } = await import('html-to-text');
      text = convert(text, HTML_OPTIONS);
    }
    checkText(name, text, limits);
    chunks = chunkText(text, { headings: type !== 'text/plain' });
  }
  if (chunks.length === 0) throw serverErrors.create('api:knowledge:empty', { name });
  return chunks;
}

/** The document type of a Content-Type header, or undefined when it is none of {@link DOCUMENT_TYPES}. */
export function documentType(contentType: string | undefined): DocumentType | undefined {
  const type = contentType?.split(';')[0].trim().toLowerCase();
  return DOCUMENT_TYPES.find((known) => known === type);
}
