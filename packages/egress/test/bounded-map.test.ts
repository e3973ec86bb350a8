import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../src/index.js';

describe('BoundedMap', () => {
  it('forgets the least recently used entry, a read of the newest key included', () => {
    const map = new BoundedMap<string, number>(3);
    map.set('a', 1).set('b', 2).set('c', 3);
    // 'c' is the newest already: reading it (again and again) keeps the order a, b, c.
    expect(map.get('c')).toBe(3);
    expect(map.get('c')).toBe(3);
    map.set('d', 4);
    expect(map.get('a')).toBeUndefined();
    // 'b' read makes it the newest; 'c' is then the oldest.
    expect(map.get('b')).toBe(2);
    map.set('e', 5);
    expect(map.get('c')).toBeUndefined();
    expect([map.get('d'), map.get('b'), map.get('e')]).toEqual([4, 2, 5]);
  });

  it('keeps its order right after a delete or a clear of the newest key', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2);
    map.delete('b');
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    // 'a' is the newest now, so 'b' goes first.
    map.set('c', 3);
    expect(map.get('b')).toBeUndefined();
    map.clear();
    map.set('x', 1).set('y', 2);
    expect(map.get('x')).toBe(1);
    map.set('z', 3);
    expect(map.get('y')).toBeUndefined();
    expect(map.size).toBe(2);
  });
});
