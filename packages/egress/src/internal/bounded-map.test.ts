import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.js';

describe('BoundedMap', () => {
  it('never holds more than max entries', () => {
    const map = new BoundedMap<number, number>(3);
    for (let i = 0; i < 100; i++) map.set(i, i);
    expect(map.size).toBe(3);
    expect([map.get(97), map.get(98), map.get(99)]).toEqual([97, 98, 99]);
  });

  it('forgets the least recently used entry, not the oldest written', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
  });

  it('overwriting a held key drops nothing', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 3);
    expect(map.size).toBe(2);
    expect(map.get('b')).toBe(2);
    expect(map.get('a')).toBe(3);
  });

  it('refuses a max below 1', () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
  });
});
