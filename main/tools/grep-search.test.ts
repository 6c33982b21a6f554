// The matching half of grep without I/O: the literal prefilter of regular expressions (which must
// never drop a real match), line and column numbers, context, long lines, a chunk's byte budget.
import { describe, expect, it } from 'vitest';
import {
  compilePattern,
  joinChunkResults,
  requiredLiteral,
  searchChunk,
  searchText,
  type GrepSpec,
} from './grep-search.ts';

const spec = (pattern: string, extra: Partial<GrepSpec> = {}): GrepSpec => ({
  pattern,
  fixedString: false,
  ignoreCase: false,
  contextLines: 0,
  maxLineChars: 500,
  ...extra,
});

describe('requiredLiteral', () => {
  it.each([
    ['NEEDLE_[A-Z]+_4[0-9]', 'NEEDLE_'],
    ['function\\s+\\w+', 'function'],
    ['import .* from', 'import '],
    ['foo\\.bar\\(', 'foo.bar('],
    ['colou?r_name', 'r_name'],
    ['ab*cdef', 'cdef'],
    ['x{2,}yzw', 'yzw'],
    ['\\d{3}-\\d{4} phone', ' phone'],
    ['(?<=prefix)suffix', 'suffix'],
    ['(?!skip)keep+ing', 'keep'],
    ['^export const', 'export const'],
    ['a]b}c', 'a]b}c'],
  ])('%s requires %s', (pattern, literal) => {
    expect(requiredLiteral(pattern)).toBe(literal);
  });

  it.each([
    ['TODO|FIXME'],
    ['ab'],
    ['\\u0041BCDEF'],
    ['\\x41BCDEF'],
    ['(abc)\\1'],
    ['[abc]+'],
    ['x{foo'],
    ['a?b?c?d?'],
  ])('%s has no literal it can prove', (pattern) => {
    expect(requiredLiteral(pattern)).toBeUndefined();
  });

  it('never requires something a match lacks', () => {
    const cases: [string, string[]][] = [
      ['NEEDLE_[A-Z]+_4[0-9]', ['NEEDLE_TOKEN_42']],
      ['colou?r_name', ['color_name', 'colour_name']],
      ['ab*cdef', ['acdef', 'abbbcdef']],
      ['(?!skip)keep+ing', ['keeping', 'keeppping']],
      ['x{2,}yzw', ['xxyzw', 'xxxxyzw']],
      ['ab*?cde', ['acde', 'abcde']],
      ['tab\\tsep', ['tab\tsep']],
    ];
    for (const [pattern, samples] of cases) {
      const literal = requiredLiteral(pattern);
      for (const sample of samples) {
        expect(new RegExp(pattern).test(sample)).toBe(true);
        if (literal !== undefined) expect(sample).toContain(literal);
      }
    }
  });
});

describe('searchText', () => {
  const search = (text: string, pattern: string, extra: Partial<GrepSpec> = {}, limit = 100) => {
    const s = spec(pattern, extra);
    return searchText(text, compilePattern(s).regex, s, limit);
  };

  it('reports one entry per line with its first match', () => {
    expect(search('aa\nbab\nccc\nxa', 'a')).toEqual([
      { line: 1, column: 1, text: 'aa' },
      { line: 2, column: 2, text: 'bab' },
      { line: 4, column: 2, text: 'xa' },
    ]);
  });

  it('handles anchors, empty lines and the end of the text', () => {
    expect(search('one\n\nthree\n', '^$')).toEqual([{ line: 2, column: 1, text: '' }]);
    expect(search('one\ntwo\n', '^')).toHaveLength(2);
    expect(search('', 'x')).toEqual([]);
    expect(search('no newline at end', 'end$')).toEqual([
      { line: 1, column: 15, text: 'no newline at end' },
    ]);
  });

  it('stops at the limit and gives context at the edges', () => {
    expect(search('a\na\na\n', 'a', {}, 2)).toHaveLength(2);
    expect(search('x\nhit\ny\n', 'hit', { contextLines: 3 })).toEqual([
      { line: 2, column: 1, text: 'hit', before: ['x'], after: ['y'] },
    ]);
  });

  it('escapes a fixed string and folds case on request', () => {
    expect(search('a.b\naxb\n', 'a.b', { fixedString: true })).toEqual([
      { line: 1, column: 1, text: 'a.b' },
    ]);
    expect(search('Straße\n', 'STRASSE', { ignoreCase: true })).toEqual([]);
    expect(search('ÉCOLE\n', 'école', { ignoreCase: true })).toHaveLength(1);
  });
});

describe("searchChunk with a byte budget (the pool's reserve worker)", () => {
  const files = ['a.txt', 'b.txt', 'c.txt'].map((path) => ({ path }));
  const text: Record<string, string> = {
    'a.txt': 'hit\n',
    'b.txt': 'hit\n'.repeat(10),
    'c.txt': 'hit\n',
  };
  const read = (file: { path: string }) => ({ data: Buffer.from(text[file.path] ?? '') });
  const request = { root: '/unused', spec: spec('hit'), files, limit: 100, maxFileBytes: 1024 };

  it('searches whole files until the next would pass the budget, and says where it stopped', async () => {
    const first = await searchChunk(request, read, { budgetBytes: 20 });
    expect(first).toMatchObject({ lines: 1, unfinished: 1, stats: { files_searched: 1 } });
    const rest = await searchChunk({ ...request, files: files.slice(1) }, read);
    expect(joinChunkResults(first, rest)).toEqual(await searchChunk(request, read));
  });

  it('stops before the first file when that one alone is over the budget', async () => {
    const result = await searchChunk({ ...request, files: files.slice(1) }, read, {
      budgetBytes: 20,
    });
    expect(result).toMatchObject({ lines: 0, files: [], unfinished: 0 });
  });
});
