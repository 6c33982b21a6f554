// Sorted-key JSON used for tool result text.
import { describe, expect, it } from 'vitest';
import { stableStringify } from './stable-json.ts';

describe('stableStringify', () => {
  it('sorts keys at every level, arrays keep their order', () => {
    expect(stableStringify({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('sorts integer-like keys as strings too (JSON.stringify would not)', () => {
    expect(stableStringify({ 10: 'a', 2: 'b', x: 'c' })).toBe('{"10":"a","2":"b","x":"c"}');
  });

  it('follows JSON.stringify for undefined, functions, toJSON and non-finite numbers', () => {
    const date = new Date('2026-01-02T03:04:05.000Z');
    expect(
      stableStringify({ u: undefined, f: () => 1, d: date, n: Number.NaN, list: [undefined] }),
    ).toBe('{"d":"2026-01-02T03:04:05.000Z","list":[null],"n":null}');
    expect(stableStringify(undefined)).toBe('null');
    expect(stableStringify('q"uote\n')).toBe(JSON.stringify('q"uote\n'));
  });

  it('matches JSON.parse round trips', () => {
    const value = { é: 'ü', emoji: '😀', nested: { list: [1, 'two', false] } };
    expect(JSON.parse(stableStringify(value))).toEqual(value);
  });

  it('refuses cycles and BigInt like JSON.stringify', () => {
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(() => stableStringify(cycle)).toThrow(TypeError);
    expect(() => stableStringify({ n: 1n })).toThrow(TypeError);
    const shared = { x: 1 };
    expect(stableStringify({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });
});

describe('maps written natively', () => {
  it('a map of paths already in order gives the text key by key sorting gives', () => {
    const paths = Array.from({ length: 2000 }, (_, index) => `src/d${index % 17}/f${index}.ts`);
    const sorted = [...paths].sort(); // ASCII: UTF-16 order is UTF-8 order
    const inOrder = Object.fromEntries(sorted.map((file, index) => [file, index % 2 ? 'code' : 1]));
    const expected = `{${sorted
      .map((file, index) => `${JSON.stringify(file)}:${JSON.stringify(index % 2 ? 'code' : 1)}`)
      .join(',')}}`;
    expect(stableStringify(inOrder)).toBe(expected);
    // The same entries inserted out of order, or with a value that has keys of its own.
    expect(stableStringify(Object.fromEntries(Object.entries(inOrder).reverse()))).toBe(expected);
    expect(stableStringify({ a: 'x', b: { d: 1, c: 2 } })).toBe('{"a":"x","b":{"c":2,"d":1}}');
  });
});

describe('key order', () => {
  it('sorts keys by UTF-8 bytes, as NotarAI does (not by UTF-16 code units)', () => {
    // U+FF5E (3 UTF-8 bytes, EF BD 9E) sorts before U+1F600 (4 bytes, F0 9F 98 80) by bytes, but
    // after it by UTF-16 code units (FF5E > D83D).
    expect(stableStringify({ '\u{1F600}': 1, '\uFF5E': 2 })).toBe('{"\uFF5E":2,"\u{1F600}":1}');
  });
});
