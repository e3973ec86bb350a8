import { type ILexingResult, Lexer } from 'chevrotain';
import { allTokens } from './tokens.js';

// One lexer for the process: building it analyses every pattern, which is far too slow to do per file.
const lexer = new Lexer(allTokens, {
  // Only starts: no token but skipped whitespace spans lines, so an end is the start plus the image's
  // length (see positions.ts), and not tracking ends makes lexing markedly faster.
  positionTracking: 'onlyStart',
  ensureOptimizations: true,
  // The default line terminators are \n, \r\n and a lone \r, which is what the language wants.
  errorMessageProvider: {
    buildUnexpectedCharactersMessage(fullText, startOffset, length) {
      const text = fullText.slice(startOffset, startOffset + Math.min(length, 20));
      return `unexpected character${length > 1 ? 's' : ''} ${showText(text)}${length > 20 ? '...' : ''}`;
    },
    buildUnableToPopLexerModeMessage() {
      return 'unexpected end of a lexer mode';
    },
  },
});

/** Splits `.mtr` text into tokens; comments land in `groups.comments`, characters no token matches in `errors`. */
export function lexMtr(text: string): ILexingResult {
  return lexer.tokenize(text);
}

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
