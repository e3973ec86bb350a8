// A copy of packages/lang/src/diagnostics/diagnostic.ts, so that the SDK installs without @maitento/lang;
// packages/sdk/test/wire-copies.test.ts fails when the two differ.
/** How bad a diagnostic is: an `error` stops `mt check` and `mt deploy`, a `warning` does not. */
export type Severity = 'error' | 'warning';

/** One finding about a config repo, with a precise position. */
export interface Diagnostic {
  /** Registry code, `mtr:<area>:<reason>` or `api:<area>:<reason>`. */
  code: string;
  severity: Severity;
  message: string;
  /** File path relative to the config repo root (forward slashes). */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
  /** 1-based, exclusive end of the span on `endLine` (for the caret underline). */
  endLine?: number;
  endColumn?: number;
  /** What may fix it, such as "did you mean ...". */
  hint?: string;
}
