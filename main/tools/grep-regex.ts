// Which regular-expression engine runs a grep pattern, so that no pattern can backtrack without
// bound. V8 has two engines: irregexp (backtracking, fast on ordinary patterns, exponential on
// patterns like `(a+)+$`) and an experimental linear-time engine (an NFA simulation, 10-500x slower
// per byte but linear in the input). With the flags set below, V8 runs a pattern the linear engine
// can handle on irregexp first and, once one search step (one RegExp exec) passes
// LINEAR_FALLBACK_BACKTRACKS backtracks, finishes that step on the linear engine: ordinary patterns
// keep irregexp's speed and a catastrophic one costs a bounded number of backtracks per step, then
// linear time (docs/decisions.md, "grep's regular-expression engines").
//
// The linear engine has no backreferences, lookahead, large counted repetitions or ignore-case
// flag. Ignore case is rewritten here into explicit character classes (`a` -> `[aA]`, with the
// JavaScript non-Unicode case folding), so such a pattern runs linear too. A pattern that still
// needs the backtracking engine runs there, under grep's deadline, on a worker that lowers its own
// priority (main/worktree/pool-worker.ts), and the tool says so.
import type * as NodeV8 from 'node:v8';
import { requireBuiltin } from '../platform/builtins.ts';

/** Backtracks one search step may take on irregexp before V8 finishes it on the linear engine. */
export const LINEAR_FALLBACK_BACKTRACKS = 50_000;

// V8 reads these flags when it compiles a regular expression: set once per process (they are
// process-wide; every regular expression in the process gains the same bound, which only ever
// changes how fast a match is found, never what it finds).
const v8 = requireBuiltin<typeof NodeV8>('node:v8');
v8.setFlagsFromString('--enable-experimental-regexp-engine');
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
v8.setFlagsFromString(`--regexp-backtracks-before-fallback=${LINEAR_FALLBACK_BACKTRACKS}`);

/**
 * - `linear`: no pattern-dependent blow-up (irregexp, finished by the linear engine past the
 *   backtrack bound).
 * - `backtracking`: the pattern needs a feature only irregexp has; it may backtrack without bound
 *   and is stopped by grep's deadline.
 */
export type RegexEngine = 'linear' | 'backtracking';

export interface CompiledPattern {
  regex: RegExp;
  engine: RegexEngine;
  /** Why the backtracking engine runs it (only for `backtracking`). */
  note?: string;
}

/** `l`: V8's linear engine (enabled above; unknown to the linter's list of flags). */
const LINEAR_FLAGS = 'ml';

/** True if V8's linear engine can run `source` (with the `m` flag and no `i`). */
function linearEngineCanRun(source: string): boolean {
  try {
    new RegExp(source, LINEAR_FLAGS);
    return true;
  } catch {
    return false;
  }
}

/** What in a pattern keeps it on the backtracking engine, in words, as far as a glance tells. */
function backtrackingReason(source: string): string {
  if (/\\[1-9]|\\k</.test(source)) return 'a backreference';
  if (/\(\?[=!]/.test(source)) return 'a lookahead';
  if (/\{\d{3,}/.test(source)) return 'a large counted repetition';
  if (/\(\?[a-zA-Z-]+:/.test(source)) return 'a flag group';
  return 'a construct the linear-time engine does not support';
}

/**
 * Compiles a grep regular expression (global, multiline) on the engine that can run it safely.
 * Throws SyntaxError for an invalid pattern.
 */
export function compileRegex(source: string, ignoreCase: boolean): CompiledPattern {
  const plain = new RegExp(source, `gm${ignoreCase ? 'i' : ''}`); // throws for an invalid pattern
  const caseSensitive = ignoreCase ? foldCase(source) : source;
  if (caseSensitive !== undefined && linearEngineCanRun(caseSensitive)) {
    return { regex: ignoreCase ? new RegExp(caseSensitive, 'gm') : plain, engine: 'linear' };
  }
  const reason =
    caseSensitive === undefined
      ? 'ignore_case with a construct the linear-time engine does not support'
      : backtrackingReason(source);
  return {
    regex: plain,
    engine: 'backtracking',
    note:
      `the pattern uses ${reason}, which only the backtracking engine runs: it is stopped at ` +
      "grep's deadline if it backtracks badly",
  };
}

// ---------------------------------------------------------------------------------------------
// Ignore case as explicit classes, with the semantics of the `i` flag without `u` (ECMAScript
// Canonicalize: simple upper-casing; a non-ASCII character never folds to an ASCII one).

function canonicalize(code: number): number {
  const upper = String.fromCharCode(code).toUpperCase();
  if (upper.length !== 1) return code;
  const folded = upper.charCodeAt(0);
  return code >= 128 && folded < 128 ? code : folded;
}

/** For each code unit that has others of the same case fold: all of them (itself included). */
let foldClasses: Map<number, number[]> | undefined;
/** Code units that fold with another one, ascending. */
let foldingUnits: number[] = [];

function caseClasses(): Map<number, number[]> {
  if (foldClasses) return foldClasses;
  const byCanonical = new Map<number, number[]>();
  for (let code = 0; code <= 0xffff; code++) {
    const canonical = canonicalize(code);
    const members = byCanonical.get(canonical);
    if (members) members.push(code);
    else byCanonical.set(canonical, [code]);
  }
  const classes = new Map<number, number[]>();
  for (const members of byCanonical.values()) {
    if (members.length < 2) continue;
    for (const member of members) classes.set(member, members);
  }
  foldingUnits = [...classes.keys()].sort((a, b) => a - b);
  foldClasses = classes;
  return classes;
}

function unit(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

const HEX2 = /^[0-9a-fA-F]{2}$/;
const HEX4 = /^[0-9a-fA-F]{4}$/;
/** Escapes of a fixed set that folding leaves as it is (\d \w \s and their negations). */
const CLASS_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S']);
const CONTROL_ESCAPES: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

/** One atom of a pattern at `index` (after a backslash): a code unit, or null to give up. */
type EscapeValue = { code: number; length: number } | { set: string; length: number } | null;

/** Reads the escape whose letter is at `index` (the backslash is before it). */
function readEscape(source: string, index: number, inClass: boolean): EscapeValue {
  const letter = source[index];
  if (letter === undefined) return null;
  if (CLASS_ESCAPES.has(letter)) return { set: `\\${letter}`, length: 1 };
  if (letter in CONTROL_ESCAPES) return { code: CONTROL_ESCAPES[letter]!, length: 1 };
  if (letter === 'b' || letter === 'B') {
    if (!inClass) return { set: `\\${letter}`, length: 1 }; // assertions
    return letter === 'b' ? { code: 0x08, length: 1 } : { code: 0x42, length: 1 };
  }
  if (letter === 'c') {
    const control = source[index + 1];
    if (control !== undefined && /[a-zA-Z]/.test(control)) {
      return { code: control.charCodeAt(0) % 32, length: 2 };
    }
    return null; // Annex B's literal "\c": rare, not worth its corner cases
  }
  if (letter === 'x') {
    const hex = source.slice(index + 1, index + 3);
    return HEX2.test(hex) ? { code: parseInt(hex, 16), length: 3 } : { code: 0x78, length: 1 };
  }
  if (letter === 'u') {
    const hex = source.slice(index + 1, index + 5);
    if (HEX4.test(hex)) return { code: parseInt(hex, 16), length: 5 };
    return null; // \u{...} means something else without the u flag: give up
  }
  if (letter === '0') return /[0-9]/.test(source[index + 1] ?? '') ? null : { code: 0, length: 1 };
  if (/[1-9]/.test(letter)) return null; // backreference or legacy octal
  if (letter === 'k') return null; // maybe a named backreference
  // An identity escape: the character itself (one code unit; a surrogate half has no case).
  return { code: letter.charCodeAt(0), length: 1 };
}

/** A code unit as a pattern atom matching it regardless of case. */
function foldedAtom(code: number): string {
  const members = caseClasses().get(code);
  if (members === undefined) return unit(code);
  return `[${members.map(unit).join('')}]`;
}

interface ClassParse {
  /** The class as a case-sensitive pattern. */
  text: string;
  /** Index after the closing bracket. */
  end: number;
}

/** Rewrites the character class starting at `start` (its `[`), or null to give up. */
function foldClass(source: string, start: number): ClassParse | null {
  let index = start + 1;
  const negated = source[index] === '^';
  if (negated) index += 1;
  const ranges: [number, number][] = [];
  const sets: string[] = [];
  let previous: number | null = null; // the last single code unit, a possible range start
  let pendingDash = false;
  const add = (code: number): void => {
    if (pendingDash && previous !== null) {
      if (previous > code) throw new SyntaxError('range out of order');
      ranges.pop(); // the start, added alone
      ranges.pop(); // the dash
      ranges.push([previous, code]);
      previous = null;
      pendingDash = false;
      return;
    }
    pendingDash = false;
    ranges.push([code, code]);
    previous = code;
  };
  for (;;) {
    const char = source[index];
    if (char === undefined) return null;
    if (char === ']') {
      index += 1;
      break;
    }
    if (char === '\\') {
      const escape = readEscape(source, index + 1, true);
      if (escape === null) return null;
      index += 1 + escape.length;
      if ('set' in escape) {
        sets.push(escape.set);
        previous = null; // Annex B: a dash next to a class escape is a literal dash
        pendingDash = false;
      } else add(escape.code);
      continue;
    }
    index += 1;
    const code = char.charCodeAt(0);
    if (char === '-' && previous !== null && !pendingDash && source[index] !== ']') {
      pendingDash = true;
      ranges.push([code, code]); // the dash, removed again if a range forms
      continue;
    }
    add(code);
  }
  const classes = caseClasses();
  const extra = new Set<number>();
  for (const [low, high] of ranges) {
    for (const code of foldingUnits) {
      if (code < low) continue;
      if (code > high) break;
      for (const member of classes.get(code)!) if (member < low || member > high) extra.add(member);
    }
  }
  const parts = ranges.map(([low, high]) =>
    low === high ? unit(low) : `${unit(low)}-${unit(high)}`,
  );
  parts.push(...sets, ...[...extra].sort((a, b) => a - b).map(unit));
  return { text: `[${negated ? '^' : ''}${parts.join('')}]`, end: index };
}

/**
 * `source` (a regular expression for the `i` flag without `u`) rewritten to match the same
 * without the `i` flag, or undefined when it holds something this rewrite does not handle (then
 * the pattern keeps the `i` flag and the backtracking engine).
 */
export function foldCase(source: string): string | undefined {
  try {
    return foldCaseOrThrow(source);
  } catch {
    return undefined;
  }
}

function foldCaseOrThrow(source: string): string | undefined {
  let out = '';
  let index = 0;
  while (index < source.length) {
    const char = source[index]!;
    if (char === '\\') {
      const escape = readEscape(source, index + 1, false);
      if (escape === null) return undefined;
      out += 'set' in escape ? escape.set : foldedAtom(escape.code);
      index += 1 + escape.length;
      continue;
    }
    if (char === '[') {
      const parsed = foldClass(source, index);
      if (parsed === null) return undefined;
      out += parsed.text;
      index = parsed.end;
      continue;
    }
    if (char === '(' && source[index + 1] === '?') {
      const kind = source[index + 2];
      if (kind === ':' || kind === '=' || kind === '!') {
        out += source.slice(index, index + 3);
        index += 3;
        continue;
      }
      if (kind === '<') {
        const after = source[index + 3];
        if (after === '=' || after === '!') {
          out += source.slice(index, index + 4);
          index += 4;
          continue;
        }
        const close = source.indexOf('>', index);
        if (close === -1) return undefined;
        out += source.slice(index, close + 1); // a group name: not folded
        index = close + 1;
        continue;
      }
      return undefined; // (?i:...) and other flag groups
    }
    if (/[a-zA-Z]/.test(char) || char.charCodeAt(0) >= 128) {
      out += foldedAtom(char.charCodeAt(0));
    } else {
      out += char; // syntax, digits and punctuation: no case
    }
    index += 1;
  }
  return out;
}
