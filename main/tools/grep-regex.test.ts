// The engine grep picks for a pattern, and ignore case rewritten as explicit classes: the rewrite
// must match exactly what the `i` flag matches (checked against V8 on many strings), and a pattern
// only the backtracking engine runs says so.
import { describe, expect, it } from 'vitest';
import { compileRegex, foldCase } from './grep-regex.ts';

const SAMPLES = [
  'abc',
  'ABC',
  'aBc',
  'Hello World',
  'hello world',
  'HELLO',
  'straße STRASSE',
  'Ünïcode ÜNÏCODE ünïcode',
  'ſ s S ı i I K k \u212a',
  'µ Μ μ',
  'x-y X-Y',
  'a]b A]B',
  'tab\there',
  'foo.bar FOO.BAR fooXbar',
  'Σίσυφος ΣΊΣΥΦΟΣ',
  '{abc} {ABC}',
  'a\u0008b',
  '0123_',
  '[x]',
];

function allMatches(regex: RegExp, text: string): string[] {
  return [...text.matchAll(regex)].map((match) => `${match.index}:${match[0]}`);
}

describe('foldCase', () => {
  it.each([
    ['abc'],
    ['hello\\s+world'],
    ['[a-z]+'],
    ['[^a-z]+'],
    ['[A-Z0-9_]+'],
    ['[x-]'],
    ['[-x]'],
    ['[a-c-e]'],
    ['[\\w-]+'],
    ['[\\d-z]'],
    ['\\x41\\u0062C'],
    ['[\\x41-\\x43]'],
    ['\\bhello\\b'],
    ['stra(ß|ss)e'],
    ['ünï\\w+'],
    ['[ü-ÿ]+'],
    ['σ'],
    ['[^σ]'],
    ['(?:ab)+|c'],
    ['(?<name>abc)'],
    ['(?<=a)b'],
    ['(?<!a)b'],
    ['a{2}'],
    ['x{abc}'],
    ['foo\\.bar'],
    ['\\cI'],
    ['[\\b]'],
    ['[\\B]'],
    ['\\k'],
    ['[]a'],
    ['[^]'],
    ['k'],
    ['s'],
    ['i'],
    ['µ'],
  ])('%s without the i flag matches what it matches with it', (pattern) => {
    const folded = foldCase(pattern);
    if (pattern === '\\k') {
      expect(folded).toBeUndefined(); // maybe a named backreference: left to the `i` flag
      return;
    }
    expect(folded).toBeDefined();
    const expected = new RegExp(pattern, 'gi');
    const actual = new RegExp(folded!, 'g');
    for (const sample of SAMPLES) {
      expect(allMatches(actual, sample), `${pattern} on ${sample}`).toEqual(
        allMatches(expected, sample),
      );
    }
  });

  it('gives up on what it does not rewrite, leaving the i flag to do it', () => {
    for (const pattern of ['(a)\\1', '\\u{41}', '(?i:a)b', '\\c1', '\\01']) {
      expect(foldCase(pattern), pattern).toBeUndefined();
    }
  });
});

describe('compileRegex', () => {
  it('runs catastrophic patterns on the linear engine, with or without ignore case', () => {
    const text = `${'a'.repeat(32)}!\n`.repeat(2000);
    for (const pattern of ['(a+)+$', '(a|aa)+$', '(\\w+\\s?)+$']) {
      for (const ignoreCase of [false, true]) {
        const compiled = compileRegex(pattern, ignoreCase);
        expect(compiled).toMatchObject({ engine: 'linear' });
        expect(compiled.note).toBeUndefined();
        // Without the linear engine this would take longer than the test's timeout.
        expect(compiled.regex.exec(text)).toBeNull();
      }
    }
  });

  it('keeps backreferences and lookahead on the backtracking engine, and says why', () => {
    expect(compileRegex('(ab)\\1', false)).toMatchObject({
      engine: 'backtracking',
      note: expect.stringMatching(/^the pattern uses a backreference, which only the backtracking/),
    });
    expect(compileRegex('foo(?=bar)', true)).toMatchObject({
      engine: 'backtracking',
      note: expect.stringContaining('a lookahead'),
    });
    expect(compileRegex('(?i:a)b', true).note).toContain('ignore_case with a construct');
    expect(compileRegex('foo(?!bar)', false).note).toContain('a lookahead');
    expect(compileRegex('(ab)\\1', false).regex.test('xabab')).toBe(true);
  });

  it('throws SyntaxError for an invalid pattern', () => {
    expect(() => compileRegex('(unclosed', false)).toThrow(SyntaxError);
    expect(() => compileRegex('[z-a]', true)).toThrow(SyntaxError);
  });
});
