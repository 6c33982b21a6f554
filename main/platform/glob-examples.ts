// The glob examples documented in docs/globs.md, as data: glob-matcher.test.ts checks every one,
// so the documentation cannot drift from the matcher. Each row: pattern, path, expected match.

export const GLOB_EXAMPLES: readonly [pattern: string, path: string, matches: boolean][] = [
  // `*` stays within one segment
  ['src/*', 'src/a.ts', true],
  ['src/*', 'src/lib/a.ts', false],
  ['*.md', 'README.md', true],
  ['*.md', 'docs/guide.md', false],
  // `?` is one character, never `/`
  ['src/?.ts', 'src/a.ts', true],
  ['src/?.ts', 'src/ab.ts', false],
  // `**` spans any number of segments, zero included
  ['src/**', 'src/a.ts', true],
  ['src/**', 'src/lib/deep/a.ts', true],
  ['src/**/*.ts', 'src/a.ts', true],
  ['src/**/*.ts', 'src/lib/a.ts', true],
  ['**/*.md', 'README.md', true],
  ['**/*.md', 'docs/api/guide.md', true],
  ['a/**/b.txt', 'a/b.txt', true],
  // dotfiles and dot-directories match like any other name
  ['src/*', 'src/.env', true],
  ['**/*.yml', '.github/workflows/ci.yml', true],
  // case-sensitive
  ['*.MD', 'README.md', false],
  ['docs/*.md', 'Docs/a.md', false],
  // braces and character classes
  ['src/{a,b}.ts', 'src/b.ts', true],
  ['src/{a,b}.ts', 'src/c.ts', false],
  ['src/[ab].ts', 'src/a.ts', true],
  ['src/[ab].ts', 'src/c.ts', false],
  // patterns are relative to the worktree root; a leading `./` is ignored
  ['./src/a.ts', 'src/a.ts', true],
  ['src/a.ts', 'lib/src/a.ts', false],
  // patterns match files only: a directory name alone does not govern what is inside
  ['src', 'src/a.ts', false],
  ['src/', 'src/a.ts', false],
  // no negation, no extglobs: `!` and `+(...)` are ordinary characters
  ['!src/a.ts', 'src/b.ts', false],
  ['!src/a.ts', 'src/a.ts', false],
  ['src/+(a|b).ts', 'src/a.ts', false],
];
