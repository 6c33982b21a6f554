import { describe, expect, it } from 'vitest';
import {
  compareCodeUnits,
  compareUtf8,
  hasSortedUtf8,
  lowerBoundUtf8,
  ordersAsUtf8,
  sortedUtf8,
} from './path-order.ts';

describe('UTF-8 path order', () => {
  // git's and Rust's order: a character beyond the BMP (😀, U+1F600) after U+FF01 (！).
  const sorted = sortedUtf8(['b', 'a/x', 'a', '😀', '！', 'a-b']);

  it('sorts by code point, as git and NotarAI do', () => {
    expect(sorted).toEqual(['a', 'a-b', 'a/x', 'b', '！', '😀']);
    expect(compareUtf8('😀', '！')).toBeGreaterThan(0);
  });

  it('finds items and insertion points in that order by binary search', () => {
    for (const [at, item] of sorted.entries()) {
      expect(lowerBoundUtf8(sorted, item)).toBe(at);
      expect(hasSortedUtf8(sorted, item)).toBe(true);
    }
    expect(lowerBoundUtf8(sorted, 'a.')).toBe(2);
    expect(lowerBoundUtf8(sorted, '\u{10000}')).toBe(5);
    expect(lowerBoundUtf8(sorted, '\u{1F601}')).toBe(6);
    expect(hasSortedUtf8(sorted, 'a/')).toBe(false);
    expect(hasSortedUtf8([], 'a')).toBe(false);
  });

  it('lets native comparison stand in only for text with no code unit from U+D800', () => {
    // JavaScript puts the emoji (a surrogate pair, 0xD83D...) before U+FF01; UTF-8 puts it after.
    expect(compareCodeUnits('😀', '！')).toBeLessThan(0);
    expect(ordersAsUtf8('😀\0！')).toBe(false);
    expect(ordersAsUtf8('\ud7ff')).toBe(true);
    expect(ordersAsUtf8('\ue000')).toBe(false);
    // Below U+D800 the two orders agree, pair by pair (a seeded sample over the whole range).
    let seed = 35;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const word = () =>
      String.fromCharCode(...Array.from({ length: 1 + (next() % 4) }, () => next() % 0xd800));
    for (let pair = 0; pair < 2000; pair++) {
      const [a, b] = [word(), word()];
      expect(ordersAsUtf8(a + b)).toBe(true);
      expect(Math.sign(compareCodeUnits(a, b))).toBe(Math.sign(compareUtf8(a, b)));
    }
  });
});
