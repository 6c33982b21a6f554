import { describe, expect, it } from 'vitest';
import { Float, notaraiJson } from './notarai-json.ts';

describe("NotarAI's JSON text", () => {
  it("writes keys in UTF-8 byte order at every level, as serde_json's sorted maps do", () => {
    const text = notaraiJson({
      b: 1,
      a: { '😀': true, '！': false, z: null },
      score: new Float(1),
    });
    expect(text).toBe(
      [
        '{',
        '  "a": {',
        '    "z": null,',
        '    "！": false,',
        '    "😀": true',
        '  },',
        '  "b": 1,',
        '  "score": 1.0',
        '}',
      ].join('\n'),
    );
  });

  it('orders each object by its own keys, however many objects share a shape', () => {
    // The same keys in another insertion order, and keys that would read alike if joined.
    const items: Record<string, string | number>[] = [
      { type: 'x', message: 'm', file: 'f' },
      { file: 'g', type: 'y', message: 'n' },
      { 'a\u0000b': 1 },
      { a: 2, b: 3 },
    ];
    const parsed = JSON.parse(notaraiJson(items)) as Record<string, unknown>[];
    expect(parsed).toEqual(items);
    expect(parsed.map((item) => Object.keys(item))).toEqual([
      ['file', 'message', 'type'],
      ['file', 'message', 'type'],
      ['a\u0000b'],
      ['a', 'b'],
    ]);
  });
});
