import { defineErrors } from '@maitento/errors';

/** The error registry of `@maitento/lang`: syntax diagnostics first, config diagnostics after. */
export const langErrors = defineErrors({
  // ---- syntax: lexer, parser and formatter diagnostics (packages/lang/src/syntax) ----
  'mtr:syntax:unexpected-token': {
    status: 400,
    message: '{detail}',
    hint: 'a file is a list of `key = value` lines; check the text at this position',
  },
  'mtr:syntax:unexpected-character': {
    status: 400,
    message: 'unexpected character {char}',
    hint: 'remove it, or put it inside a double-quoted string',
  },
  'mtr:syntax:unterminated-string': {
    status: 400,
    message: 'unterminated string: a `"` is missing before the end of the line',
    hint: 'close the string with `"` on the same line; write a newline as \\n',
  },
  'mtr:syntax:invalid-escape': {
    status: 400,
    message: 'invalid escape {escape} in a string',
    hint: 'valid escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX',
  },
  'mtr:syntax:too-deep': {
    status: 400,
    message: 'arrays and objects nest deeper than {max} levels',
    hint: 'flatten the value; use @json("file.json") for deeply nested data',
  },
  // ---- config ----
});
