/**
 * A Map that holds at most `max` entries and forgets the least recently used one past that: the one bounded
 * cache of every package (DNS answers, redactors, validators, stored versions, keys, pinned sets).
 */
export class BoundedMap<K, V> {
  readonly #map = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError(`BoundedMap needs a whole max of at least 1, not ${max}`);
  }

  /** How many entries are held. */
  get size(): number {
    return this.#map.size;
  }

  /** The value of `key`, marked as just used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  /** Stores `value` as just used, dropping the least recently used entry when full. */
  set(key: K, value: V): this {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value as K);
    return this;
  }

  /** Forgets `key`; true when it was held. */
  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Forgets every entry. */
  clear(): void {
    this.#map.clear();
  }
}
