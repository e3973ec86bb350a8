/** A Map that forgets its least recently used entry past `max` entries. */
export class Lru<K, V> {
  readonly #map = new Map<K, V>();
  constructor(readonly max: number) {}

  /** The value of `key`, marked as just used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  /** Stores `value`, dropping the oldest entry when full. */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value as K);
  }
}
