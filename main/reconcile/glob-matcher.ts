// The one glob matcher of the reconciliation engine: artifact globs, spec `exclude` globs and
// `exclude_patterns` all go through it, so every tool agrees on what a pattern means. Semantics
// (docs/globs.md): `*` and `?` stay within one path segment, `**` spans any number of segments,
// dotfiles match, `{a,b}` and `[ab]` work, matching is case-sensitive, patterns are POSIX paths
// relative to the worktree root and are tested against file paths only. Built on picomatch with
// negation and extglobs turned off; patterns without glob characters are looked up in a Set.
import picomatch from 'picomatch';

const PICOMATCH_OPTIONS: picomatch.PicomatchOptions = {
  dot: true,
  nocase: false,
  nonegate: true,
  noextglob: true,
  windows: false,
};

/** A compiled set of patterns: `test(path)` is true when any pattern matches the path. */
export interface GlobSet {
  readonly patterns: readonly string[];
  test(path: string): boolean;
  /** True when no pattern was given (matches nothing). */
  readonly empty: boolean;
}

/** Removes a leading `./` (any number) so `./src/*` and `src/*` mean the same. */
export function normalizePattern(pattern: string): string {
  let result = pattern.trim();
  while (result.startsWith('./')) result = result.slice(2);
  return result;
}

/** True if the pattern has a character picomatch treats as glob syntax. */
function hasGlobSyntax(pattern: string): boolean {
  return picomatch.scan(pattern, PICOMATCH_OPTIONS).isGlob || /[\\]/.test(pattern);
}

/** Compiles patterns once; literal paths become a Set lookup, the rest one regex each. */
export function compileGlobs(patterns: readonly string[]): GlobSet {
  const literals = new Set<string>();
  const matchers: ((path: string) => boolean)[] = [];
  for (const raw of patterns) {
    const pattern = normalizePattern(raw);
    if (pattern === '') continue;
    if (!hasGlobSyntax(pattern)) {
      literals.add(pattern);
      continue;
    }
    const regex = picomatch.makeRe(pattern, PICOMATCH_OPTIONS);
    matchers.push((path) => regex.test(path));
  }
  const none = literals.size === 0 && matchers.length === 0;
  return {
    patterns: [...patterns],
    empty: none,
    test(path: string): boolean {
      if (literals.has(path)) return true;
      for (const matcher of matchers) if (matcher(path)) return true;
      return false;
    },
  };
}

/** One pattern against one path (for tests and docs; hot paths compile once with compileGlobs). */
export function matchesGlob(pattern: string, path: string): boolean {
  return compileGlobs([pattern]).test(path);
}
