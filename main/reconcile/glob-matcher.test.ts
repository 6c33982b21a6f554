import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GLOB_EXAMPLES } from './glob-examples.ts';
import { compileGlobs, matchesGlob, normalizePattern } from './glob-matcher.ts';

describe('glob matcher', () => {
  it.each(GLOB_EXAMPLES)('%s against %s is %s (docs/globs.md)', (pattern, file, expected) => {
    expect(matchesGlob(pattern, file)).toBe(expected);
  });

  it('compiles a set: literal paths and globs together, empty patterns ignored', () => {
    const set = compileGlobs(['docs/a.md', 'src/**/*.ts', '', './b.txt']);
    expect(set.test('docs/a.md')).toBe(true);
    expect(set.test('src/x/y.ts')).toBe(true);
    expect(set.test('b.txt')).toBe(true);
    expect(set.test('docs/b.md')).toBe(false);
    expect(compileGlobs([]).empty).toBe(true);
    expect(compileGlobs(['']).test('')).toBe(false);
  });

  it('matches non-ASCII names', () => {
    expect(matchesGlob('docs/*.md', 'docs/café-ü.md')).toBe(true);
    expect(matchesGlob('données/**', 'données/été/a.txt')).toBe(true);
  });

  it('normalizes only a leading ./', () => {
    expect(normalizePattern('././src/*')).toBe('src/*');
    expect(normalizePattern('src/./a')).toBe('src/./a');
  });
});

describe('docs/globs.md', () => {
  it('lists every checked example in its table', async () => {
    const doc = await readFile(new URL('../../docs/globs.md', import.meta.url), 'utf8');
    const rows = doc
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) =>
        line
          .split(/(?<!\\)\|/)
          .slice(1, -1)
          .map((cell) => cell.trim().replaceAll('\\|', '|')),
      );
    const documented = rows.map(([pattern, file, matches]) => [
      pattern?.slice(1, -1),
      file?.slice(1, -1),
      matches === 'yes',
    ]);
    expect(documented).toEqual(GLOB_EXAMPLES.map((example) => [...example]));
  });
});
