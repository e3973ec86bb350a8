import { MaitentoError } from './maitento-error.js';

/** One error code of the SDK: the HTTP status it stands for, the message and hint templates (`{name}`). */
export interface SdkErrorSpec {
  readonly status: number;
  readonly message: string;
  readonly hint?: string;
}

/** Replaces `{name}` with the named parameter; unknown names stay as written. */
export function renderTemplate(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : String(value);
  });
}

/**
 * The SDK's error codes, shaped as the registries of the other Maitento packages (`specs`, `codes()`,
 * `has()`, `create()`) but without depending on them, so that the SDK installs on its own.
 */
export class SdkErrorRegistry<T extends Record<string, SdkErrorSpec>> {
  /** The entries, keyed by code. */
  readonly specs: Readonly<T>;

  constructor(specs: T) {
    this.specs = Object.freeze({ ...specs });
  }

  /** Creates the error of `code`, its message and hint rendered from `params`. */
  create<C extends keyof T & string>(code: C, params: Record<string, unknown> = {}): MaitentoError {
    const spec = this.specs[code];
    const hint = spec.hint === undefined ? undefined : renderTemplate(spec.hint, params);
    return new MaitentoError(code, spec.status, renderTemplate(spec.message, params), { hint });
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
