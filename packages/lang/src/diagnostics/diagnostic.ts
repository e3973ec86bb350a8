import type * as wire from '@maitento/sdk/wire';
/**
 * One finding about a config repo, with a precise (1-based) position: its registry code (`mtr:<area>:<reason>` or
 * `api:<area>:<reason>`), the file relative to the repo root, and what may fix it. The wire's shape, declared once
 * in @maitento/sdk (packages/sdk/src/wire/schemas.ts).
 */
export type Diagnostic = wire.Diagnostic;

/** How bad a diagnostic is: an `error` stops `mt check` and `mt deploy`, a `warning` does not. */
export type Severity = Diagnostic['severity'];
