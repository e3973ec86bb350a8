import type { MtError } from '@maitento/errors';

/**
 * Counts what each API key holds open (run event streams, MCP sessions) and refuses one more than `max`: a
 * key that opens streams or sessions without end would otherwise hold the server's memory and connections.
 */
export class PerKeyLimit {
  readonly #held = new Map<string, number>();

  /** `refuse` makes the error thrown for a key that already holds `max`. */
  constructor(
    readonly max: number,
    private readonly refuse: (max: number) => MtError,
  ) {}

  /** How many `keyId` holds now. */
  held(keyId: string): number {
    return this.#held.get(keyId) ?? 0;
  }

  /** Takes one for `keyId`, or throws the refusal when it holds `max`; returns its release (calling it twice releases once). */
  acquire(keyId: string): () => void {
    const held = this.held(keyId);
    if (held >= this.max) throw this.refuse(this.max);
    this.#held.set(keyId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.held(keyId) - 1;
      if (left > 0) this.#held.set(keyId, left);
      else this.#held.delete(keyId);
    };
  }
}
