// The matching half of grep, free of I/O so it runs the same in a worker thread and in the main
// thread: compiles the pattern (a JavaScript regular expression or a fixed string), decides whether
// a file is binary (the same test as read_file), and finds matching lines with their context in a
// file's bytes. A chunk of files is searched through a reader that opens them (grep-readers.ts).
import { looksBinary } from '../platform/binary-content.ts';
import { compileRegex, type CompiledPattern } from './grep-regex.ts';

/** Bytes sniffed from the start of a file to decide whether it is binary (as read_file does). */

/** How a search is done; plain data, so it can be posted to a worker. */
export interface GrepSpec {
  pattern: string;
  /** The pattern is a literal string, not a regular expression. */
  fixedString: boolean;
  ignoreCase: boolean;
  /** Lines of context before and after each matching line. */
  contextLines: number;
  /** Longer lines are cut (around the match for a matching line). */
  maxLineChars: number;
}

export interface GrepLineMatch {
  /** 1-based line number. */
  line: number;
  /** 1-based column of the first match in the line, in UTF-16 code units. */
  column: number;
  /** The line without its line ending, cut to maxLineChars around the match. */
  text: string;
  /** The line was longer than maxLineChars and `text` is an excerpt. */
  text_truncated?: boolean;
  /** Up to contextLines lines before (only when context was asked for). */
  before?: string[];
  /** Up to contextLines lines after. */
  after?: string[];
}

/** One file with at least one matching line. */
export interface GrepFileMatches {
  path: string;
  matches: GrepLineMatch[];
}

/** A file the reader could not search, and why. */
export type SkipReason = 'symlink' | 'too_large' | 'unreadable' | 'missing' | 'not_a_file';

export type ReadOutcome = { data: Buffer } | { skipped: SkipReason };

export interface GrepStats {
  files_searched: number;
  binary: number;
  too_large: number;
  symlinks: number;
  unreadable: number;
}

export interface GrepChunkFile {
  path: string;
  /** Path bytes relative to the root when `path` is lossy (not valid UTF-8). */
  raw?: Uint8Array;
}

/** A chunk of files to search, posted to a worker as is. */
export interface GrepChunkRequest {
  root: string;
  spec: GrepSpec;
  files: GrepChunkFile[];
  /** Stop after this many matching lines in this chunk (the caller's cap). */
  limit: number;
  /** Files larger than this are skipped (too_large). */
  maxFileBytes: number;
}

export interface GrepChunkResult {
  files: GrepFileMatches[];
  stats: GrepStats;
  /** Matching lines found (sum over files). */
  lines: number;
  /**
   * Set when the search stopped at its byte budget: the index in `files` of the first file not
   * searched (the caller searches `files.slice(unfinished)` as another chunk).
   */
  unfinished?: number;
}

/**
 * Text a chunk searches on the pool's reserve worker before it stops and leaves the rest to an
 * ordinary worker (main/platform/worker-pool.ts): the linear engine's worst case over this much
 * text stays well under a second, so the reserve is soon free for the next caller.
 */
export const RESERVE_GREP_BYTES = 256 * 1024;

/** A chunk searched in two parts (the first stopped at its budget) as one result. */
export function joinChunkResults(first: GrepChunkResult, rest: GrepChunkResult): GrepChunkResult {
  const stats = emptyStats();
  addStats(stats, first.stats);
  addStats(stats, rest.stats);
  return {
    files: [...first.files, ...rest.files],
    stats,
    lines: first.lines + rest.lines,
    ...(rest.unfinished === undefined ? {} : { unfinished: rest.unfinished }),
  };
}

export function emptyStats(): GrepStats {
  return { files_searched: 0, binary: 0, too_large: 0, symlinks: 0, unreadable: 0 };
}

export function addStats(into: GrepStats, from: GrepStats): void {
  into.files_searched += from.files_searched;
  into.binary += from.binary;
  into.too_large += from.too_large;
  into.symlinks += from.symlinks;
  into.unreadable += from.unreadable;
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/g;

/** True if the pattern, read as a regular expression, is just literal text. */
function isLiteral(pattern: string): boolean {
  return !/[\\^$.*+?()[\]{}|]/.test(pattern);
}

/**
 * The regular expression for a spec (global, multiline: `^`/`$` match at line ends) and the engine
 * that runs it (grep-regex.ts). A fixed string is a literal: linear on either engine, so it keeps
 * the `i` flag as it is. Throws SyntaxError for an invalid pattern.
 */
export function compilePattern(spec: GrepSpec): CompiledPattern {
  if (spec.fixedString) {
    const source = spec.pattern.replace(REGEX_SPECIAL, '\\$&');
    return { regex: new RegExp(source, `gm${spec.ignoreCase ? 'i' : ''}`), engine: 'linear' };
  }
  return compileRegex(spec.pattern, spec.ignoreCase);
}

/** Shortest literal worth a prefilter. */
const MIN_REQUIRED_LITERAL = 3;
/** Escapes that stand for one character class or assertion, with no payload after them. */
const SIMPLE_ESCAPES = new Set(['b', 'B', 'd', 'D', 'w', 'W', 's', 'S', 't', 'n', 'r', 'f', 'v']);
/** Punctuation that an escape turns into itself. */
const ESCAPED_LITERALS = new Set([...'.*+?^$|()[]{}\\/-_:;,!"\'#%&<>=@`~ ']);

/**
 * A literal that every match of a (case-sensitive) regular expression must contain, when that is
 * easy to prove: the longest run of plain characters at the top level of a pattern with no
 * top-level alternation. Conservative: a construct it does not fully understand ends the run or,
 * if it might change what follows, gives up (undefined).
 */
export function requiredLiteral(pattern: string): string | undefined {
  let best = '';
  let run = '';
  let depth = 0;
  let inClass = false;
  const flush = (): void => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (inClass) {
      if (char === '\\') index += 1;
      else if (char === ']') inClass = false;
      continue;
    }
    if (char === '\\') {
      const next = pattern[index + 1];
      if (next === undefined) return undefined;
      index += 1;
      if (depth > 0) {
        if (!SIMPLE_ESCAPES.has(next) && !ESCAPED_LITERALS.has(next)) return undefined;
        continue;
      }
      if (ESCAPED_LITERALS.has(next)) run += next;
      else if (SIMPLE_ESCAPES.has(next)) flush();
      else return undefined; // \x41, \u0041, \cX, \p{...}, \k<name>, \1: not worth parsing
      continue;
    }
    switch (char) {
      case '[':
        flush();
        inClass = true;
        continue;
      case '(':
        flush();
        depth += 1;
        continue;
      case ')':
        flush();
        depth -= 1;
        continue;
      case '|':
        if (depth === 0) return undefined;
        continue;
      default:
    }
    if (depth > 0) continue;
    switch (char) {
      case '?':
      case '*':
        // The character before may be absent: it is not required.
        run = run.slice(0, -1);
        flush();
        continue;
      case '+':
        flush(); // present at least once, but not followed by the next character
        continue;
      case '{': {
        const quantifier = /^\{\d+(,\d*)?\}\??/.exec(pattern.slice(index));
        if (quantifier === null) return undefined;
        run = run.slice(0, -1);
        flush();
        index += quantifier[0].length - 1;
        continue;
      }
      case '.':
      case '^':
      case '$':
        flush();
        continue;
      default:
        run += char;
    }
  }
  flush();
  return best.length >= MIN_REQUIRED_LITERAL ? best : undefined;
}

/** Bytes that every matching file must contain, when that can be known without decoding. */
export function requiredBytes(spec: GrepSpec): Buffer | undefined {
  if (spec.ignoreCase || spec.pattern.length === 0) return undefined;
  if (spec.fixedString || isLiteral(spec.pattern)) return Buffer.from(spec.pattern, 'utf8');
  const literal = requiredLiteral(spec.pattern);
  return literal === undefined ? undefined : Buffer.from(literal, 'utf8');
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function cut(line: string, max: number): string {
  return line.length > max ? line.slice(0, max) : line;
}

/**
 * The matching lines of a text, at most `limit`. One entry per line (its first match); a match
 * that spans lines is reported on the line where it starts.
 */
export function searchText(
  text: string,
  regex: RegExp,
  spec: GrepSpec,
  limit: number,
): GrepLineMatch[] {
  const matches: GrepLineMatch[] = [];
  const max = spec.maxLineChars;
  let cursor = 0; // position whose line number is `lineNumber`
  let lineNumber = 1;
  regex.lastIndex = 0;
  while (matches.length < limit) {
    const found = regex.exec(text);
    if (found === null) break;
    const index = found.index;
    // The empty "line" after a final newline is not a line.
    if (index === text.length && (text.length === 0 || text.endsWith('\n'))) break;
    for (let at = text.indexOf('\n', cursor); at !== -1 && at < index;) {
      lineNumber += 1;
      at = text.indexOf('\n', at + 1);
    }
    const lineStart = text.lastIndexOf('\n', index - 1) + 1;
    let lineEnd = text.indexOf('\n', index);
    if (lineEnd === -1) lineEnd = text.length;
    cursor = lineStart;
    const line = stripCr(text.slice(lineStart, lineEnd));
    const column = index - lineStart + 1;
    const match: GrepLineMatch = { line: lineNumber, column, text: line };
    if (line.length > max) {
      const from = Math.max(0, Math.min(column - 1 - Math.floor(max / 4), line.length - max));
      match.text = line.slice(from, from + max);
      match.text_truncated = true;
    }
    if (spec.contextLines > 0) {
      const before: string[] = [];
      let end = lineStart - 1; // the newline ending the previous line
      while (before.length < spec.contextLines && end >= 0) {
        const start = text.lastIndexOf('\n', end - 1) + 1;
        before.unshift(cut(stripCr(text.slice(start, end)), max));
        end = start - 1;
      }
      const after: string[] = [];
      let start = lineEnd + 1;
      while (after.length < spec.contextLines && start < text.length) {
        let end2 = text.indexOf('\n', start);
        if (end2 === -1) end2 = text.length;
        after.push(cut(stripCr(text.slice(start, end2)), max));
        start = end2 + 1;
      }
      match.before = before;
      match.after = after;
    }
    matches.push(match);
    if (lineEnd >= text.length) break;
    regex.lastIndex = lineEnd + 1;
  }
  return matches;
}

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/**
 * Reads (through `read`) and searches a chunk of files, in order. With `budgetBytes`, stops before
 * the file that would take the text searched past it (even the first) and says where (`unfinished`).
 */
export async function searchChunk(
  request: GrepChunkRequest,
  read: (file: GrepChunkFile) => ReadOutcome | Promise<ReadOutcome>,
  options: { budgetBytes?: number } = {},
): Promise<GrepChunkResult> {
  const { regex } = compilePattern(request.spec);
  const required = requiredBytes(request.spec);
  const stats = emptyStats();
  const files: GrepFileMatches[] = [];
  let lines = 0;
  let bytes = 0;
  for (const [index, file] of request.files.entries()) {
    if (lines >= request.limit) break;
    const outcome = await read(file);
    if (options.budgetBytes !== undefined && 'data' in outcome) {
      bytes += outcome.data.length;
      if (bytes > options.budgetBytes) return { files, stats, lines, unfinished: index };
    }
    if ('skipped' in outcome) {
      if (outcome.skipped === 'symlink') stats.symlinks += 1;
      else if (outcome.skipped === 'too_large') stats.too_large += 1;
      else if (outcome.skipped === 'unreadable') stats.unreadable += 1;
      continue;
    }
    stats.files_searched += 1;
    const { data } = outcome;
    if (required !== undefined && data.indexOf(required) === -1) continue;
    if (looksBinary(data)) {
      stats.binary += 1;
      continue;
    }
    const found = searchText(decoder.decode(data), regex, request.spec, request.limit - lines);
    if (found.length > 0) {
      files.push({ path: file.path, matches: found });
      lines += found.length;
    }
  }
  return { files, stats, lines };
}
