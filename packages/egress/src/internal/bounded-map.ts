/**
 * A Map that holds at most `max` entries and forgets the least recently used one past that: the one bounded
 * cache of every package (DNS answers, redactors, validators, stored versions, keys, pinned sets).
 */
export class BoundedMap<K, V> {
  readonly #map = new Map<K, V>();
  // The key last marked as used: marking it again would change nothing. A hot cache is read for the same key call
  // after call (one key, one tool), and the delete and set each time leave the Map a tombstone to rehash later.
  #newest: K | undefined;

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
    if (value !== undefined && key !== this.#newest) {
      this.#map.delete(key);
      this.#map.set(key, value);
      this.#newest = key;
    }
    return value;
  }

  /** Stores `value` as just used, dropping the least recently used entry when full. */
  set(key: K, value: V): this {
    this.#map.delete(key);
    this.#map.set(key, value);
    this.#newest = key;
    if (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value as K);
    return this;
  }

  /** Forgets `key`; true when it was held. */
  delete(key: K): boolean {
    if (key === this.#newest) this.#newest = undefined;
    return this.#map.delete(key);
  }

  /** Forgets every entry. */
  clear(): void {
    this.#newest = undefined;
    this.#map.clear();
  }
}
