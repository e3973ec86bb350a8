import { MtError } from './mt-error.js';

/** One registry entry: the HTTP status, the message template (`{name}` placeholders) and what it means. */
export interface ErrorSpec {
  /** HTTP status a server answers with. */
  readonly status: number;
  /** Message template; `{name}` is replaced by the parameter of that name. */
  readonly message: string;
  /** Optional hint on how to fix it, also a template. */
  readonly hint?: string;
}

/** Parameters substituted into a template. */
export type ErrorParams = Record<string, string | number | boolean | null | undefined>;

const CODE_SHAPE = /^(api|mtr):[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$/;

/** Replaces `{name}` with the named parameter; unknown names stay as written. */
export function renderTemplate(template: string, params: ErrorParams = {}): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : String(value);
  });
}

// Every code defined in this process, with the registry (all its entries, as text) that defined it. The same
// registry defined again (its module evaluated twice, as test runners and duplicated installs do) is accepted;
// a code in a second, different registry is refused: each code is defined once, in one place.
const definedCodes = new Map<string, string>();

function claimCodes(specs: Record<string, ErrorSpec>): void {
  const identity = JSON.stringify(specs);
  for (const code of Object.keys(specs)) {
    const owner = definedCodes.get(code);
    if (owner !== undefined && owner !== identity) {
      throw new Error(`error code ${code} is already defined by another registry; define it once and share it`);
    }
  }
  for (const code of Object.keys(specs)) definedCodes.set(code, identity);
}

/** A package's error registry: the codes it owns and a typed way to create each. */
export class ErrorRegistry<T extends Record<string, ErrorSpec>> {
  /** The entries, keyed by code. */
  readonly specs: Readonly<T>;

  constructor(specs: T) {
    for (const code of Object.keys(specs)) {
      if (!CODE_SHAPE.test(code)) throw new Error(`error code ${code} is not shaped api|mtr:<area>:<reason>`);
    }
    claimCodes(specs);
    this.specs = Object.freeze({ ...specs });
  }

  /** Creates the error of `code`, its message rendered from `params`. */
  create<C extends keyof T & string>(
    code: C,
    params: ErrorParams = {},
    options: { details?: unknown; cause?: unknown; message?: string } = {},
  ): MtError<C> {
    const spec = this.specs[code];
    const hint = spec.hint === undefined ? undefined : renderTemplate(spec.hint, params);
    return new MtError(code, spec.status, options.message ?? renderTemplate(spec.message, params), {
      hint,
      details: options.details,
      cause: options.cause,
    });
  }

  /** Every code of the registry. */
  codes(): (keyof T & string)[] {
    return Object.keys(this.specs) as (keyof T & string)[];
  }

  /** True when `code` belongs to this registry. */
  has(code: string): code is keyof T & string {
    return Object.hasOwn(this.specs, code);
  }
}

/** Defines a registry; the code type is derived from the object so there is no second list. */
export function defineErrors<const T extends Record<string, ErrorSpec>>(specs: T): ErrorRegistry<T> {
  return new ErrorRegistry(specs);
}
