import { createToken, Lexer, type TokenType } from 'chevrotain';

// Token definitions of the `.mtr` language. The order of `allTokens` matters: chevrotain takes the
// first pattern that matches, so comments come before anything starting with `/` and the complete
// string before the unterminated one.

/** Spaces, tabs, line breaks and a byte-order mark; skipped. */
export const WhiteSpace = createToken({
  name: 'WhiteSpace',
  pattern: /[ \t\r\n\f\v\uFEFF]+/,
  group: Lexer.SKIPPED,
  line_breaks: true,
});

/** `// comment` to the end of the line; kept in the `comments` group for the formatter. */
export const Comment = createToken({
  name: 'Comment',
  pattern: /\/\/[^\r\n]*/,
  group: 'comments',
});

/** Every token the parser sees; a line of junk at the top level is skipped as a run of these. */
export const AnyToken = createToken({ name: 'AnyToken', pattern: Lexer.NA });

/** Tokens that cannot begin a key, so cannot begin an assignment: a top-level line starting with one is junk. */
export const StrayStart = createToken({ name: 'StrayStart', pattern: Lexer.NA, categories: [AnyToken] });

/** Any string-like token: the category the parser consumes for strings. */
export const StringLike = createToken({ name: 'StringLike', pattern: Lexer.NA, categories: [AnyToken] });

/** A complete double-quoted string; escapes are checked when it is decoded. */
export const StringLiteral = createToken({
  name: 'StringLiteral',
  pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*"/,
  categories: [StringLike],
});

/** A string whose closing quote is missing before the end of the line; reported, then parsed as a string. */
export const UnterminatedString = createToken({
  name: 'UnterminatedString',
  pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*\\?/,
  categories: [StringLike],
});

/** A JSON number, also negative. */
export const NumberLiteral = createToken({
  name: 'NumberLiteral',
  pattern: /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/,
  categories: [StrayStart],
});

/**
 * A bare name: a letter or `_`, then letters, digits, `_` and `-`; `/`-separated parts are lexed
 * too so that `request:address/city` is one token (the AST builder accepts them only after `:`).
 */
export const Identifier = createToken({
  name: 'Identifier',
  pattern: /[A-Za-z_][A-Za-z0-9_-]*(?:\/[A-Za-z0-9_-]+)*/,
  categories: [AnyToken],
});

/** The keywords, which are also valid key segments. */
export const Keyword = createToken({ name: 'Keyword', pattern: Lexer.NA, categories: [AnyToken] });

/** `true`. */
export const True = createToken({ name: 'True', pattern: 'true', longer_alt: Identifier, categories: [Keyword] });
/** `false`. */
export const False = createToken({ name: 'False', pattern: 'false', longer_alt: Identifier, categories: [Keyword] });
/** `null`. */
export const Null = createToken({ name: 'Null', pattern: 'null', longer_alt: Identifier, categories: [Keyword] });

/** `@name` opening a directive such as `@ref("x")`. */
export const DirectiveName = createToken({
  name: 'DirectiveName',
  pattern: /@[A-Za-z_][A-Za-z0-9_-]*/,
  categories: [StrayStart],
});

/** `=`. */
export const Equals = createToken({ name: 'Equals', pattern: '=', label: '`=`', categories: [StrayStart] });
/** `.` between key segments. */
export const Dot = createToken({ name: 'Dot', pattern: '.', label: '`.`', categories: [StrayStart] });
/** `:` inside a `kind:name` key segment. */
export const Colon = createToken({ name: 'Colon', pattern: ':', label: '`:`', categories: [StrayStart] });
/** `,` between array elements and directive arguments. */
export const Comma = createToken({ name: 'Comma', pattern: ',', label: '`,`', categories: [StrayStart] });
/** `[`. */
export const LBracket = createToken({ name: 'LBracket', pattern: '[', label: '`[`', categories: [StrayStart] });
/** `]`. */
export const RBracket = createToken({ name: 'RBracket', pattern: ']', label: '`]`', categories: [StrayStart] });
/** `{`. */
export const LCurly = createToken({ name: 'LCurly', pattern: '{', label: '`{`', categories: [StrayStart] });
/** `}`. */
export const RCurly = createToken({ name: 'RCurly', pattern: '}', label: '`}`', categories: [StrayStart] });
/** `(`. */
export const LParen = createToken({ name: 'LParen', pattern: '(', label: '`(`', categories: [StrayStart] });
/** `)`. */
export const RParen = createToken({ name: 'RParen', pattern: ')', label: '`)`', categories: [StrayStart] });

/** Every token type, in matching order. */
export const allTokens: TokenType[] = [
  WhiteSpace,
  AnyToken,
  StrayStart,
  Comment,
  StringLike,
  StringLiteral,
  UnterminatedString,
  NumberLiteral,
  Keyword,
  True,
  False,
  Null,
  Identifier,
  DirectiveName,
  Equals,
  Dot,
  Colon,
  Comma,
  LBracket,
  RBracket,
  LCurly,
  RCurly,
  LParen,
  RParen,
];
