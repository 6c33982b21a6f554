import { describe, expect, it } from 'vitest';
import { compareUtf8, hasSortedUtf8, lowerBoundUtf8, sortedUtf8 } from './path-order.ts';

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
});
