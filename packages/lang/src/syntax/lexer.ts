import { type ILexingResult, Lexer } from 'chevrotain';
import { showText } from '../internal/show-text.js';
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
