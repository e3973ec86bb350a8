import { EOF, type IParserErrorMessageProvider, type IToken, type TokenType, tokenMatcher } from 'chevrotain';
import { showText } from './lexer.js';

/** The most parser errors one file reports; past that the parse stops with one more diagnostic. */
export const MAX_PARSER_ERRORS = 100;

/** Thrown (and caught by `parseMtr`) when a file has more than {@link MAX_PARSER_ERRORS} errors. */
export class TooManyErrors extends Error {
  constructor(
    message: string,
    readonly token: IToken | undefined,
  ) {
    super(message);
  }
}

/** What the message provider needs to know about the parse in progress; `parseMtr` sets it. */
export const messageContext: { tokens: IToken[]; count: number } = { tokens: [], count: 0 };

/** Names a token for "found ..." in a message, with its line when it is on a later line than `previous`. */
export function describeToken(token: IToken | undefined, previous?: IToken): string {
  if (token === undefined || tokenMatcher(token, EOF) || token.image === '') return 'the end of the file';
  const image = token.image.length > 24 ? `${token.image.slice(0, 24)}...` : token.image;
  const later =
    previous !== undefined &&
    Number.isFinite(previous.startLine) &&
    (token.startLine as number) > (previous.startLine as number);
  return later ? `${showText(image)} on line ${token.startLine}` : showText(image);
}

function tokenName(type: TokenType): string {
  if (type.LABEL !== undefined) return type.LABEL;
  if (type.name === 'StringLike') return 'a string';
  if (type.name === 'Identifier') return 'a name';
  return type.name;
}

const KEY_PART = new Set(['Identifier', 'StringLiteral', 'UnterminatedString', 'True', 'False', 'Null']);
const KEY_JOIN = new Set(['Dot', 'Colon']);

// The key written before `previous`: `a.b:c` when `previous` is its last segment.
function keyBefore(previous: IToken): string | undefined {
  const tokens = messageContext.tokens;
  let lo = 0;
  let hi = tokens.length - 1;
  let index = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const offset = tokens[mid].startOffset;
    if (offset === previous.startOffset) {
      index = mid;
      break;
    }
    if (offset < previous.startOffset) lo = mid + 1;
    else hi = mid - 1;
  }
  if (index < 0 || !KEY_PART.has(tokens[index].tokenType.name)) return undefined;
  let first = index;
  while (
    first >= 2 &&
    KEY_JOIN.has(tokens[first - 1].tokenType.name) &&
    KEY_PART.has(tokens[first - 2].tokenType.name) &&
    index - first < 40
  ) {
    first -= 2;
  }
  return tokens
    .slice(first, index + 1)
    .map((t) => t.image)
    .join('');
}

function counted(message: string, token: IToken | undefined): string {
  messageContext.count++;
  if (messageContext.count > MAX_PARSER_ERRORS) throw new TooManyErrors(message, token);
  return message;
}

function is(token: IToken | undefined, name: string): boolean {
  return token !== undefined && token.tokenType?.name === name;
}

function mismatch(expected: TokenType, actual: IToken, previous: IToken): string {
  const found = describeToken(actual, previous);
  switch (expected.name) {
    case 'Equals': {
      const key = keyBefore(previous);
      return key === undefined
        ? `expected \`=\` after the key, found ${found}`
        : `expected \`=\` after the key \`${key}\`, found ${found}`;
    }
    case 'RBracket':
      return is(previous, 'LBracket') || is(previous, 'Comma')
        ? `expected a value or \`]\`, found ${found}`
        : `expected \`,\` or \`]\` after an array element, found ${found}`;
    case 'RCurly':
      return `expected \`key = value\` or \`}\` in an object, found ${found}`;
    case 'RParen':
      return `expected a string argument, \`,\` or \`)\` in a directive, found ${found}`;
    case 'LParen':
      return `expected \`(\` after the directive \`${previous.image}\`, found ${found}`;
    default:
      if (is(previous, 'Colon')) return `expected a name after \`:\`, found ${found}`;
      if (is(previous, 'Dot')) return `expected a key segment after \`.\`, found ${found}`;
      return `expected ${tokenName(expected)}, found ${found}`;
  }
}

function noViableAlt(actual: IToken, previous: IToken, ruleName: string): string {
  const found = describeToken(actual, previous);
  if (ruleName === 'value') {
    return is(previous, 'Equals') ? `expected a value after \`=\`, found ${found}` : `expected a value, found ${found}`;
  }
  if (ruleName === 'keySegment') {
    if (is(previous, 'Colon')) return `expected a name after \`:\`, found ${found}`;
    if (is(previous, 'Dot')) return `expected a key segment after \`.\`, found ${found}`;
    return `expected a key, found ${found}`;
  }
  return `unexpected ${found}`;
}

/** Friendly parser error messages ("expected `=` after the key `method`"), from chevrotain's hooks. */
export const messages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage({ expected, actual, previous }) {
    return counted(mismatch(expected, actual, previous), actual);
  },
  buildNoViableAltMessage({ actual, previous, ruleName }) {
    return counted(noViableAlt(actual[0], previous, ruleName), actual[0]);
  },
  buildEarlyExitMessage({ actual }) {
    return counted(`unexpected ${describeToken(actual[0])}`, actual[0]);
  },
  buildNotAllInputParsedMessage({ firstRedundant }) {
    return counted(`unexpected ${describeToken(firstRedundant)}: expected \`key = value\``, firstRedundant);
  },
};
