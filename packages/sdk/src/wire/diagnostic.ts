// Diagnostics as the wire carries them, derived from ./schemas.ts; @maitento/lang's `Diagnostic` is checked
// equal to this when the server compiles.
import type { Static } from 'typebox';
import type { DiagnosticSchema } from './schemas.js';

/** One finding about a config repo, with a precise position. */
export type Diagnostic = Static<typeof DiagnosticSchema>;

/** How bad a diagnostic is: an `error` stops `mt check` and `mt deploy`, a `warning` does not. */
export type Severity = Diagnostic['severity'];
