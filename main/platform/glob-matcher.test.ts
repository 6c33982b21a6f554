import picomatch from 'picomatch';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GLOB_EXAMPLES } from './glob-examples.ts';
import { sortedUtf8 } from './path-order.ts';
import {
  candidateRanges,
  compileGlobs,
  matchingInSlices,
  globBudget,
  matchesGlob,
  MAX_COMPILED_CHARACTERS,
  normalizePattern,
  matchesAnyInSlices,
} from './glob-matcher.ts';
import { seededRandom } from '../testing/seeded-random.ts';

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

describe('linear time, the same answers', () => {
  /** A small deterministic PRNG (mulberry32), so a failure reproduces. */
  it('agrees with picomatch (the matcher it replaced) on 20,000 random patterns and paths', () => {
    const next = seededRandom(20261125);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const segmentPieces = [
      'a',
      'b',
      '.',
      '*',
      '?',
      '[ab]',
      '[a-c]',
      '[^a]',
      '{a,b}',
      '{a,{b,c}}',
      'ab',
    ];
    // Names as git lists them: never '.' or '..' segments.
    const pathNames = ['a', 'b', 'c', '.a', 'ab', 'ba', 'a.b', 'aab', 'abc', '..b', 'bb'];
    const options = { dot: true, nocase: false, nonegate: true, noextglob: true, windows: false };
    let compared = 0;
    for (let round = 0; compared < 20_000; round++) {
      const segments = Array.from({ length: 1 + Math.floor(next() * 3) }, () =>
        next() < 0.2
          ? '**'
          : Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(segmentPieces)).join(''),
      );
      const pattern = segments.join('/');
      // `**` inside a segment is `*` here (docs/globs.md); picomatch lets it cross slashes.
      if (segments.some((segment) => segment !== '**' && segment.includes('**'))) continue;
      const ours = compileGlobs([pattern]);
      // One deliberate difference (docs/globs.md): a trailing `/**` needs at least one more
      // segment, as in NotarAI's globset; picomatch says so only as `/**/*`.
      const theirs = picomatch.makeRe(pattern.endsWith('/**') ? `${pattern}/*` : pattern, options);
      for (let sample = 0; sample < 10; sample++) {
        const path = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(pathNames)).join(
          '/',
        );
        compared++;
        const expected = theirs.test(path);
        if (ours.test(path) !== expected) {
          throw new Error(
            `${JSON.stringify(pattern)} vs ${JSON.stringify(path)}: picomatch says ${expected}`,
          );
        }
      }
    }
    expect(compared).toBe(20_000);
  });

  it('a directory, `**` and one name (decided by the last name alone) answer as the general walk', () => {
    // `[s]rc/...` has no literal directory: the same pattern goes through the segment walk.
    const shapes: [string, string][] = [
      ['src/**/*.ts', '[s]rc/**/*.ts'],
      ['src/**', '[s]rc/**'],
      ['src/lib/**/a?', '[s]rc/lib/**/a?'],
      ['a//**/b', '[a]//**/b'],
      // Plain names with a prefix, runs between stars and a suffix that may overlap them.
      ['src/**/x*s*.ts', '[s]rc/**/x*s*.ts'],
      ['src/**/x*x', '[s]rc/**/x*x'],
      ['src/**/ab*b*', '[s]rc/**/ab*b*'],
    ];
    const names = ['src', 'lib', 'a', 'ab', 'x.ts', 'x.tsx', '.ts', 'b', '', 'x', 'xx', 'xs.ts'];
    names.push('x.s.ts', 'xsts', 'xax', 'abx', 'abb', 'abxb', 'xa.ts');
    const paths: string[] = [];
    const walk = (prefix: string[], depth: number): void => {
      if (prefix.length > 0) paths.push(prefix.join('/'));
      if (depth === 0) return;
      for (const name of names) walk([...prefix, name], depth - 1);
    };
    walk([], 4);
    for (const [fast, general] of shapes) {
      const a = compileGlobs([fast]);
      const b = compileGlobs([general]);
      const differs = paths.filter((path) => a.test(path) !== b.test(path));
      expect(differs, `${fast} vs ${general}`).toEqual([]);
      expect(paths.some((path) => a.test(path))).toBe(true);
    }
  });

  it('catastrophic patterns end at once (a regex engine backtracks for minutes)', () => {
    const started = performance.now();
    const hostile = compileGlobs([`**/${'*a'.repeat(30)}*b`]);
    const long = 'a'.repeat(255);
    for (let index = 0; index < 1000; index++) {
      expect(hostile.test(`src/${long}${index}.txt`)).toBe(false);
    }
    const deep = Array.from({ length: 50 }, () => 'a').join('/');
    expect(compileGlobs(['**/a/**/a/**/a/**/a/**/b']).test(deep)).toBe(false);
    expect(compileGlobs(['**/a/**/a/**/a/**/a/**/b']).test(`${deep}/b`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('braces that expand past 1,024 alternatives are refused with a clear error', () => {
    expect(() => compileGlobs(['{a,b}'.repeat(30)])).toThrow(
      'glob expands to more than 1024 alternatives',
    );
  });

  it('braces that multiply a long pattern past the budget are refused, quickly and in bounded memory', () => {
    // 1,024 alternatives of a 10,000-character tail: 10 MB of tokens from 10 KB of text (the
    // worktree process ran out of memory on 100 such patterns before the budget).
    const multiplied = `*${'{a,b}'.repeat(10)}${'x'.repeat(10_000)}`;
    const started = performance.now();
    expect(() => compileGlobs(Array.from({ length: 100 }, (_, i) => `${multiplied}${i}`))).toThrow(
      `globs expand to more than ${MAX_COMPILED_CHARACTERS.toLocaleString('en-US')} characters`,
    );
    expect(performance.now() - started).toBeLessThan(1_000);
    // The same braces on a short tail are fine, and still mean what they say.
    const fine = compileGlobs([`src/*${'{a,b}'.repeat(10)}.ts`]);
    expect(fine.test(`src/x${'ab'.repeat(5)}.ts`)).toBe(true);
    expect(fine.test(`src/x${'ab'.repeat(4)}c.ts`)).toBe(false);
  });

  it('matches `*` and literals exactly as a regular expression would (every short pattern and name over a, b)', () => {
    const words = (length: number, alphabet: string[]): string[] =>
      length === 0
        ? ['']
        : words(length - 1, alphabet).flatMap((word) => alphabet.map((char) => word + char));
    const patterns = [1, 2, 3, 4, 5].flatMap((length) => words(length, ['a', 'b', '*']));
    const names = [0, 1, 2, 3, 4, 5, 6].flatMap((length) => words(length, ['a', 'b']));
    for (const pattern of patterns) {
      const set = compileGlobs([`d/${pattern}`]);
      const oracle = new RegExp(`^d/${pattern.replaceAll('*', '[^/]*')}$`);
      for (const name of names) {
        expect(set.test(`d/${name}`), `${pattern} against ${name}`).toBe(oracle.test(`d/${name}`));
      }
    }
  });

  it('decides a hostile spec against a path of long segments in milliseconds, not seconds', () => {
    // ~1 MB of patterns (within the budget) against 12 segments of 250 characters: the two-pointer
    // walk alone took ~10 s for this one path.
    const patterns = Array.from({ length: 4_000 }, (_, i) => `**/*${'a'.repeat(124)}b${i}`);
    const set = compileGlobs(patterns);
    const path = Array.from({ length: 12 }, () => 'a'.repeat(250)).join('/');
    const started = performance.now();
    expect(set.test(path)).toBe(false);
    expect(set.test(`${path.slice(0, -2)}b7`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('a budget passed to several compiles is shared by them', () => {
    const pattern = `src/*${'x'.repeat(1_000)}`;
    const budget = globBudget(2_500);
    compileGlobs([`${pattern}1`], budget);
    compileGlobs([`${pattern}2`], budget);
    expect(() => compileGlobs([`${pattern}3`], budget)).toThrow(
      'globs expand to more than 2,500 characters',
    );
    expect(() => compileGlobs([`${pattern}3`])).not.toThrow(); // a fresh budget of its own
  });

  it('compiles identical patterns once (YAML aliases repeat one), and literal paths cost no budget', () => {
    const long = `src/*${'x'.repeat(2_000)}`;
    const set = compileGlobs(
      Array.from({ length: 1_000 }, () => long),
      globBudget(2_100),
    );
    expect(set.test(`src/a${'x'.repeat(2_000)}`)).toBe(true);
    const literals = Array.from({ length: 1_000 }, (_, i) => `src/${'y'.repeat(1_000)}${i}.ts`);
    expect(compileGlobs(literals, globBudget(10)).test(literals[999]!)).toBe(true);
  });

  it('candidateRanges: every path a set matches is one of its literals or inside a range', async () => {
    const patterns = [
      'src/**/*.ts',
      'src/lib/*.ts', // inside src/: no range of its own
      'docs/a.md',
      './docs/{b,c}.md',
      '**/*.json',
      'données/été/*',
      'a\\*b/*', // an escaped star is a literal name
      'x//y*', // an empty segment
      'deep/er/**',
      'te?t/*.rs',
      'emoji/😀*',
    ];
    const listing = sortedUtf8([
      'src/a.ts',
      'src/lib/b.ts',
      'src/lib/c.js',
      'srcx/a.ts',
      'src.ts',
      'docs/a.md',
      'docs/b.md',
      'docs/c.md',
      'docs/d.md',
      'package.json',
      'deep/er/x/y.txt',
      'deep/era.txt',
      'données/été/a.txt',
      'données/étéx/a.txt',
      'a*b/z',
      'axb/z',
      'x//yz',
      'x/yz',
      'test/a.rs',
      'tent/a.rs',
      'emoji/😀.png',
      'emoji/\uff01.png',
      'z/q.json',
    ]);
    // Each pattern alone, then all together (prefixes inside others are merged).
    for (const sets of [
      ...patterns.map((pattern) => [compileGlobs([pattern])]),
      patterns.map((pattern) => compileGlobs([pattern])),
    ]) {
      const { ranges, literals } = candidateRanges(sets, listing);
      const inRange = (index: number) =>
        ranges.some(([start, end]) => index >= start && index < end);
      listing.forEach((file, index) => {
        if (sets.some((set) => set.test(file))) {
          expect(
            literals.includes(index) || inRange(index),
            `${sets[0]!.patterns[0]} ${file}`,
          ).toBe(true);
        }
      });
      // matchingInSlices: exactly the files a test of every file finds, in the listing's order.
      expect(await matchingInSlices(sets, listing)).toEqual(
        listing.filter((file) => sets.some((set) => set.test(file))),
      );
      for (let i = 1; i < ranges.length; i++)
        expect(ranges[i]![0]).toBeGreaterThanOrEqual(ranges[i - 1]![1]);
    }
    // A directory narrows the search to the files under it.
    const src = candidateRanges([compileGlobs(['src/**/*.ts'])], listing);
    expect(src.ranges.flatMap(([start, end]) => listing.slice(start, end))).toEqual([
      'src/a.ts',
      'src/lib/b.ts',
      'src/lib/c.js',
    ]);
    expect(candidateRanges([compileGlobs(['docs/a.md', 'docs/{b,c}.md'])], listing)).toEqual({
      ranges: [],
      literals: ['docs/a.md', 'docs/b.md', 'docs/c.md'].map((file) => listing.indexOf(file)),
    });
    expect(candidateRanges([compileGlobs(['**/*.json'])], listing).ranges).toEqual([
      [0, listing.length],
    ]);
  });
});

describe('matchesAnyInSlices', () => {
  it('says whether any sorted path matches, as testing every path does', async () => {
    const paths = sortedUtf8([
      'README.md',
      'docs/a.md',
      'docs/deep/b.txt',
      'lib/x.ts',
      'src/a.ts',
      'src/b/c.ts',
      'src/b/d.md',
      'src/zz/last.rs',
      'tests/t.test.ts',
    ]);
    const patterns = [
      'docs/**',
      'nothing/**',
      'src/**/*.rs', // the only match is the last path of its directory
      'src/**/*.py', // a directory with paths, none matching
      '**/*.md',
      '**/*.go',
      'README.md', // a literal listed
      'CHANGELOG.md', // a literal not listed
      'src/b/*.md',
      '{lib,tests}/**/*.ts',
      'lib/*.js',
    ];
    for (const pattern of patterns) {
      const set = compileGlobs([pattern]);
      const expected = paths.some((file) => set.test(file));
      expect(await matchesAnyInSlices(set, paths), pattern).toBe(expected);
    }
    // Both answers occur.
    const answers = await Promise.all(
      patterns.map((pattern) => matchesAnyInSlices(compileGlobs([pattern]), paths)),
    );
    expect(answers).toContain(true);
    expect(answers).toContain(false);
  });
});
