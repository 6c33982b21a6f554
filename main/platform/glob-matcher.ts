// The one glob matcher of the reconciliation engine: artifact globs, spec `exclude` globs and
// `exclude_patterns` all go through it (and the file tools' filters, main/tools/glob.ts), so every
// tool agrees on what a pattern means. Semantics (docs/globs.md): `*` and `?` stay within one path
// segment, `**` as a whole segment spans any number of segments, dotfiles match, `{a,b}` and `[ab]`
// work, matching is case-sensitive, patterns are POSIX paths relative to the worktree root and are
// tested against file paths only.
//
// Linear-time by construction, because a committed spec is untrusted input: a pattern is compiled
// to tokens per segment (no regular expression), a segment is matched with the classic two-pointer
// wildcard algorithm (backtracking only to the last `*`: O(n·m)), and the segments with the same
// algorithm over `**`. A regex engine backtracks on `**/*a*a*a*a*a*a*a*a*a*a*a*a*b` against a long
// name for minutes. Braces are expanded up front, at most MAX_ALTERNATIVES; patterns without glob
// syntax are looked up in a Set.
//
// Bounded in memory too: braces multiply a pattern (`*{0,1,...,999}<10,000 characters>` is 10 MB
// of tokens from 14 KB of text), so one compile may come to at most MAX_COMPILED_CHARACTERS (a
// GlobBudget, which a caller can share between compiles, as the spec loader does for a worktree's
// specs); identical patterns (YAML aliases repeat one) are compiled once.

import { compareUtf8 } from './path-order.ts';
import { nextSlice, sliceDue } from './time-slices.ts';

/** The most alternatives one pattern's braces may expand to. */
export const MAX_ALTERNATIVES = 1024;

/**
 * What the patterns of one budget may come to: the characters of every wildcard alternative
 * compiled to tokens, plus every string brace expansion builds (~40 MB of tokens at most).
 */
export const MAX_COMPILED_CHARACTERS = 1 << 20;

/** Characters left to compile; shared by the compiles that pass the same budget. */
export interface GlobBudget {
  readonly limit: number;
  characters: number;
}

export function globBudget(limit = MAX_COMPILED_CHARACTERS): GlobBudget {
  return { limit, characters: limit };
}

/** Takes `characters` from the budget, or throws an Error naming the limit. */
function charge(budget: GlobBudget, characters: number): void {
  budget.characters -= characters;
  if (budget.characters < 0) {
    throw new Error(
      `globs expand to more than ${budget.limit.toLocaleString('en-US')} characters once ` +
        'braces are expanded (braces multiply a pattern)',
    );
  }
}

/** A compiled set of patterns: `test(path)` is true when any pattern matches the path. */
export interface GlobSet {
  readonly patterns: readonly string[];
  test(path: string): boolean;
  /** True when no pattern was given (matches nothing). */
  readonly empty: boolean;
  /** The paths the set matches by name alone (patterns without wildcards). */
  readonly literals: ReadonlySet<string>;
  /**
   * For each other alternative, the directory every path it matches is inside: its leading
   * segments without wildcards, each followed by `/` (`src/lib/` for `src/lib/**\/*.ts`), or ''.
   * What candidateRanges narrows a sorted listing with.
   */
  readonly prefixes: readonly string[];
}

/** Removes a leading `./` (any number) so `./src/*` and `src/*` mean the same. */
export function normalizePattern(pattern: string): string {
  let result = pattern.trim();
  while (result.startsWith('./')) result = result.slice(2);
  return result;
}

type Token =
  | { kind: 'literal'; code: number }
  | { kind: 'one' }
  | { kind: 'star' }
  | { kind: 'class'; negated: boolean; ranges: [number, number][] };

/** A segment: its compiled tokens, or GLOBSTAR (`**` standing alone: any number of segments). */
type Segment = CompiledSegment | typeof GLOBSTAR;
const GLOBSTAR = 'globstar' as const;

/**
 * One segment's tokens, with what lets most paths be decided without the two-pointer walk (whose
 * O(n·m) a hostile spec can make cost seconds per path: 4,000 patterns of 250 characters against
 * a path of long segments).
 */
interface CompiledSegment {
  /** The tokens, for the two-pointer walk (empty for a `plain` segment). */
  tokens: Token[];
  /** Characters a matching name has at least (every token but `*` takes one). */
  minLength: number;
  /** Runs of literal characters the name must contain (necessary, not sufficient; not plain). */
  runs: string[];
  /**
   * Set when the segment is only literals and `*`: `prefix*run*...*suffix` (or `exact`), matched
   * exactly by finding each run leftmost in turn, in linear time.
   */
  plain?: { exact?: string; prefix: string; middle: string[]; suffix: string };
}

function compileSegment(tokens: Token[]): CompiledSegment {
  const runs: string[] = [];
  const starSeparated: string[] = [''];
  let run = '';
  let plain = true;
  let minLength = 0;
  for (const token of tokens) {
    if (token.kind !== 'star') minLength++;
    if (token.kind === 'literal') {
      const char = String.fromCharCode(token.code);
      run += char;
      starSeparated[starSeparated.length - 1] += char;
      continue;
    }
    if (run !== '') runs.push(run);
    run = '';
    if (token.kind === 'star') starSeparated.push('');
    else plain = false;
  }
  if (run !== '') runs.push(run);
  // A plain segment is matched by its strings alone: its tokens and runs are not kept.
  const segment: CompiledSegment = plain
    ? { tokens: [], minLength, runs: [] }
    : { tokens, minLength, runs };
  if (plain) {
    segment.plain =
      starSeparated.length === 1
        ? { exact: starSeparated[0]!, prefix: '', middle: [], suffix: '' }
        : {
            prefix: starSeparated[0]!,
            middle: starSeparated.slice(1, -1),
            suffix: starSeparated.at(-1)!,
          };
  }
  return segment;
}

/** One brace alternative, compiled. */
interface CompiledGlob {
  segments: Segment[];
  /** The literal path when the alternative has no wildcard or class (a Set lookup). */
  literal?: string;
}

/**
 * Expands `{a,b}` (nested, escapes kept) into alternatives; `{a}` and unclosed braces are text.
 * Every string built is charged to `budget`.
 */
function expandBraces(pattern: string, budget: GlobBudget): string[] {
  // Find the first top-level brace group with a comma at its own depth.
  for (let start = 0; start < pattern.length; start++) {
    const char = pattern[start];
    if (char === '\\') {
      start++;
      continue;
    }
    if (char !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    let end = -1;
    for (let index = start; index < pattern.length; index++) {
      const inner = pattern[index];
      if (inner === '\\') {
        index++;
      } else if (inner === '{') {
        depth++;
      } else if (inner === '}') {
        depth--;
        if (depth === 0) {
          end = index;
          break;
        }
      } else if (inner === ',' && depth === 1) {
        commas.push(index);
      }
    }
    if (end === -1) return [pattern]; // unclosed: the rest is text
    if (commas.length === 0) continue; // `{a}`: text
    const before = pattern.slice(0, start);
    const after = pattern.slice(end + 1);
    const bounds = [start, ...commas, end];
    const results: string[] = [];
    for (let part = 0; part < bounds.length - 1; part++) {
      const choice = pattern.slice(bounds[part]! + 1, bounds[part + 1]);
      charge(budget, before.length + choice.length + after.length);
      for (const expanded of expandBraces(`${before}${choice}${after}`, budget)) {
        results.push(expanded);
        if (results.length > MAX_ALTERNATIVES) {
          throw new Error(`glob expands to more than ${MAX_ALTERNATIVES} alternatives`);
        }
      }
    }
    return results;
  }
  return [pattern];
}

/** Parses a bracket expression starting at `start` (`[`); undefined when it is not closed. */
function parseClass(
  segment: string,
  start: number,
): { token: Token & { kind: 'class' }; end: number } | undefined {
  let index = start + 1;
  let negated = false;
  if (segment[index] === '!' || segment[index] === '^') {
    negated = true;
    index++;
  }
  const ranges: [number, number][] = [];
  let first = true;
  while (index < segment.length) {
    let char = segment[index]!;
    if (char === ']' && !first) return { token: { kind: 'class', negated, ranges }, end: index };
    first = false;
    if (char === '\\' && index + 1 < segment.length) {
      index++;
      char = segment[index]!;
    }
    const low = char.charCodeAt(0);
    if (segment[index + 1] === '-' && index + 2 < segment.length && segment[index + 2] !== ']') {
      let high = segment[index + 2]!;
      let skip = 2;
      if (high === '\\' && index + 3 < segment.length) {
        high = segment[index + 3]!;
        skip = 3;
      }
      ranges.push([low, high.charCodeAt(0)]);
      index += skip + 1;
    } else {
      ranges.push([low, low]);
      index++;
    }
  }
  return undefined;
}

/** Tokens of one segment (never a lone `**`). */
function segmentTokens(segment: string): { tokens: Token[]; literal: boolean } {
  const tokens: Token[] = [];
  let literal = true;
  for (let index = 0; index < segment.length; index++) {
    const char = segment[index]!;
    if (char === '\\' && index + 1 < segment.length) {
      index++;
      tokens.push({ kind: 'literal', code: segment.charCodeAt(index) });
    } else if (char === '*') {
      literal = false;
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' }); // `**` inside: one `*`
    } else if (char === '?') {
      literal = false;
      tokens.push({ kind: 'one' });
    } else if (char === '[') {
      const parsed = parseClass(segment, index);
      if (parsed) {
        literal = false;
        tokens.push(parsed.token);
        index = parsed.end;
      } else {
        tokens.push({ kind: 'literal', code: char.charCodeAt(0) });
      }
    } else {
      tokens.push({ kind: 'literal', code: char.charCodeAt(0) });
    }
  }
  return { tokens, literal };
}

function compileAlternative(pattern: string): CompiledGlob {
  const segments: Segment[] = [];
  let literal = true;
  for (const part of pattern.split('/')) {
    if (part === '**') {
      literal = false;
      if (segments.at(-1) !== GLOBSTAR) segments.push(GLOBSTAR);
      continue;
    }
    const compiled = segmentTokens(part);
    literal &&= compiled.literal;
    segments.push(compileSegment(compiled.tokens));
  }
  // A trailing `/**` is everything *inside*: at least one more segment (`src/**` matches
  // `src/a.ts`, not a file named `src`), as NotarAI's globset has it.
  if (segments.length > 1 && segments.at(-1) === GLOBSTAR) {
    segments.push(compileSegment([{ kind: 'star' }]));
  }
  if (!literal) return { segments };
  const text = segments.map((segment) => (segment as CompiledSegment).plain?.exact ?? '').join('/');
  return { segments, literal: text };
}

/**
 * matchSegment against the name of `path` that starts at `start` (its last name), a plain segment
 * without cutting the name out: the product spec's `src/**\/*.ts` tests every file of a worktree,
 * and a substring per path was most of that test's cost and garbage.
 */
function matchName(segment: CompiledSegment, path: string, start: number): boolean {
  const plain = segment.plain;
  if (plain === undefined) return matchSegment(segment, path.slice(start));
  if (path.length - start < segment.minLength) return false;
  if (plain.exact !== undefined) {
    return path.length - start === plain.exact.length && path.startsWith(plain.exact, start);
  }
  const end = path.length - plain.suffix.length;
  if (end < start + plain.prefix.length) return false;
  if (!path.startsWith(plain.prefix, start) || !path.endsWith(plain.suffix)) return false;
  // Each run leftmost after the one before, as matchSegment.
  let at = start + plain.prefix.length;
  for (const run of plain.middle) {
    const found = path.indexOf(run, at);
    if (found === -1 || found + run.length > end) return false;
    at = found + run.length;
  }
  return true;
}

function tokenMatches(token: Token, code: number): boolean {
  switch (token.kind) {
    case 'literal':
      return token.code === code;
    case 'one':
      return true;
    case 'class': {
      let inside = false;
      for (const [low, high] of token.ranges) {
        if (code >= low && code <= high) {
          inside = true;
          break;
        }
      }
      return inside !== token.negated;
    }
    case 'star':
      return false;
  }
}

/** One segment against one path segment (a name). */
function matchSegment(segment: CompiledSegment, text: string): boolean {
  if (text.length < segment.minLength) return false;
  const plain = segment.plain;
  if (plain) {
    if (plain.exact !== undefined) return text === plain.exact;
    const end = text.length - plain.suffix.length;
    if (end < plain.prefix.length) return false;
    if (!text.startsWith(plain.prefix) || !text.endsWith(plain.suffix)) return false;
    // Each run leftmost after the one before: exact for runs between stars.
    let at = plain.prefix.length;
    for (const run of plain.middle) {
      const found = text.indexOf(run, at);
      if (found === -1 || found + run.length > end) return false;
      at = found + run.length;
    }
    return true;
  }
  for (const run of segment.runs) if (!text.includes(run)) return false;
  return matchTokens(segment.tokens, text);
}

/** One segment's tokens against one path segment: two pointers, back to the last `*` only. */
function matchTokens(tokens: readonly Token[], text: string): boolean {
  let t = 0;
  let s = 0;
  let starT = -1;
  let starS = 0;
  while (s < text.length) {
    const token = tokens[t];
    if (token !== undefined && token.kind === 'star') {
      starT = t++;
      starS = s;
    } else if (token !== undefined && tokenMatches(token, text.charCodeAt(s))) {
      t++;
      s++;
    } else if (starT >= 0) {
      t = starT + 1;
      s = ++starS;
    } else {
      return false;
    }
  }
  while (tokens[t]?.kind === 'star') t++;
  return t === tokens.length;
}

/** The segments against the path's parts, `**` as the star of the same algorithm. */
function matchSegments(segments: readonly Segment[], parts: readonly string[]): boolean {
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  while (s < parts.length) {
    const segment = segments[p];
    if (segment === GLOBSTAR) {
      starP = p++;
      starS = s;
    } else if (segment !== undefined && matchSegment(segment, parts[s]!)) {
      p++;
      s++;
    } else if (starP >= 0) {
      p = starP + 1;
      s = ++starS;
    } else {
      return false;
    }
  }
  while (segments[p] === GLOBSTAR) p++;
  return p === segments.length;
}

/**
 * Compiles patterns once; literal paths become a Set lookup. Throws an Error naming the problem
 * for patterns whose braces expand too far, or that come to more than the budget's characters.
 */
export function compileGlobs(
  patterns: readonly string[],
  budget: GlobBudget = globBudget(),
): GlobSet {
  const literals = new Set<string>();
  const matchers: Segment[][] = [];
  for (const pattern of new Set(patterns.map(normalizePattern))) {
    if (pattern === '') continue;
    for (const alternative of expandBraces(pattern, budget)) {
      if (!GLOB_SYNTAX.test(alternative)) {
        literals.add(alternative); // (its characters: the pattern's, or charged by the expansion)
        continue;
      }
      charge(budget, alternative.length);
      const compiled = compileAlternative(alternative);
      if (compiled.literal !== undefined) literals.add(compiled.literal);
      else matchers.push(compiled.segments);
    }
  }
  const none = literals.size === 0 && matchers.length === 0;
  const directories = matchers.map(literalDirectory);
  const lastOnly = matchers.map((segments, index) =>
    lastSegmentOnly(segments, directories[index]!),
  );
  return {
    patterns: [...patterns],
    empty: none,
    literals,
    prefixes: [...new Set(directories)],
    test(path: string): boolean {
      if (literals.has(path)) return true;
      // A path outside a matcher's literal directories is not split for it: most paths of a
      // worktree fail that check for most patterns.
      let parts: string[] | undefined;
      for (let index = 0; index < matchers.length; index++) {
        if (!path.startsWith(directories[index]!)) continue;
        const last = lastOnly[index];
        if (last !== undefined) {
          if (matchName(last, path, path.lastIndexOf('/') + 1)) return true;
          continue;
        }
        parts ??= path.split('/');
        if (matchSegments(matchers[index]!, parts)) return true;
      }
      return false;
    },
  };
}

/**
 * For an alternative that is its literal directory, `**` and one more segment (`src/**`,
 * `src/**\/*.ts`, `**\/*.md`: most artifact globs), that segment: a path inside the directory
 * matches exactly when its last name matches it (`**` takes whatever lies between), so the path
 * need not be split. Undefined for any other shape.
 */
function lastSegmentOnly(
  segments: readonly Segment[],
  directory: string,
): CompiledSegment | undefined {
  const literalCount = directory === '' ? 0 : directory.split('/').length - 1;
  if (segments.length !== literalCount + 2 || segments[literalCount] !== GLOBSTAR) return undefined;
  const last = segments[literalCount + 1];
  return last === GLOBSTAR ? undefined : last;
}

/** The leading segments of an alternative that are literal names, as `a/b/` ('' for none). */
function literalDirectory(segments: readonly Segment[]): string {
  let directory = '';
  for (const segment of segments.slice(0, -1)) {
    const exact = segment === GLOBSTAR ? undefined : segment.plain?.exact;
    if (exact === undefined) break;
    directory += `${exact}/`;
  }
  return directory;
}

/**
 * Where in `sorted` (paths in UTF-8 byte order, as git lists them) the paths `sets` may match are:
 * the index ranges `[start, end)` of the paths inside one of their prefixes (no two overlapping,
 * in order), and the indexes of their literal paths that `sorted` holds. Any path the sets match
 * is at one of those, so a spec is matched against the files under its own directories instead
 * of every file (10,000 specs of one file each were 100 million tests). Binary searches:
 * O((prefixes + literals) · log n).
 */
export function candidateRanges(
  sets: readonly GlobSet[],
  sorted: readonly string[],
): { ranges: [number, number][]; literals: number[] } {
  const prefixes = [...new Set(sets.flatMap((set) => set.prefixes))].sort(compareUtf8);
  const ranges: [number, number][] = [];
  let covering: string | undefined;
  for (const prefix of prefixes) {
    // Sorted: a prefix inside an earlier one comes right after it, and its range is inside it.
    if (covering !== undefined && prefix.startsWith(covering)) continue;
    covering = prefix;
    const start = firstIndex(sorted, 0, (path) => compareUtf8(path, prefix) >= 0);
    const end = firstIndex(sorted, start, (path) => !path.startsWith(prefix));
    if (end > start) ranges.push([start, end]);
  }
  const literals = new Set<number>();
  for (const set of sets) {
    for (const literal of set.literals) {
      const index = firstIndex(sorted, 0, (path) => compareUtf8(path, literal) >= 0);
      if (sorted[index] === literal) literals.add(index);
    }
  }
  return { ranges, literals: [...literals].sort((a, b) => a - b) };
}

/**
 * The paths of `sorted` (UTF-8 byte order) that any of `sets` matches, in that order: their
 * literal paths, and the paths in their candidateRanges tested one by one, in slices of the event
 * loop (time-slices.ts).
 */
export async function matchingInSlices(
  sets: readonly GlobSet[],
  sorted: readonly string[],
  signal?: AbortSignal,
): Promise<string[]> {
  const { ranges, literals } = candidateRanges(sets, sorted);
  // The ranges are in order and do not overlap: the paths found in them come in order.
  const found: number[] = [];
  for (const [start, end] of ranges) {
    for (let index = start; index < end; index++) {
      const path = sorted[index]!;
      for (const set of sets) {
        if (set.test(path)) {
          found.push(index);
          break;
        }
      }
      if (sliceDue()) await nextSlice(signal);
    }
  }
  return mergeIndexes(found, literals).map((index) => sorted[index]!);
}

/**
 * Whether `set` matches any path of `sorted` (UTF-8 byte order): one of its literal paths, or a
 * path of its candidateRanges, tested until the first match, in slices of the event loop. A glob
 * whose directory holds no listed path costs two binary searches, not a test of every path.
 */
export async function matchesAnyInSlices(
  set: GlobSet,
  sorted: readonly string[],
  signal?: AbortSignal,
): Promise<boolean> {
  const { ranges, literals } = candidateRanges([set], sorted);
  if (literals.length > 0) return true;
  for (const [start, end] of ranges) {
    for (let index = start; index < end; index++) {
      if (set.test(sorted[index]!)) return true;
      if (sliceDue()) await nextSlice(signal);
    }
  }
  return false;
}

/** Two ascending lists of indexes as one, ascending, without duplicates. */
function mergeIndexes(left: readonly number[], right: readonly number[]): number[] {
  if (right.length === 0) return left as number[];
  const merged: number[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const a = left[i] ?? Number.POSITIVE_INFINITY;
    const b = right[j] ?? Number.POSITIVE_INFINITY;
    merged.push(Math.min(a, b));
    if (a <= b) i++;
    if (b <= a) j++;
  }
  return merged;
}

/** The first index from `from` at which `past` holds (it holds from there on), or the length. */
function firstIndex(
  sorted: readonly string[],
  from: number,
  past: (path: string) => boolean,
): number {
  let low = from;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (past(sorted[middle]!)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** Any character that may make an alternative more than a literal path (`\\` escapes one). */
const GLOB_SYNTAX = /[*?[\\]/;

/** One pattern against one path (for tests and docs; hot paths compile once with compileGlobs). */
export function matchesGlob(pattern: string, path: string): boolean {
  return compileGlobs([pattern]).test(path);
}
