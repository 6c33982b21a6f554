// The window's numbers read as numbers: thousands grouped, words in the right number.
import { describe, expect, test } from 'vitest';
import { count, plural } from './format.ts';

describe('count and plural', () => {
  test('group thousands the English way, whatever the machine locale', () => {
    expect(count(0)).toBe('0');
    expect(count(999)).toBe('999');
    expect(count(20_000)).toBe('20,000');
    expect(count(1_234_567)).toBe('1,234,567');
  });

  test('plural picks the word by the number and groups it', () => {
    expect(plural(1, 'file')).toBe('1 file');
    expect(plural(0, 'file')).toBe('0 files');
    expect(plural(20_001, 'call')).toBe('20,001 calls');
    expect(plural(2, 'match', 'matches')).toBe('2 matches');
  });
});
