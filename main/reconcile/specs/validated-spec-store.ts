// The CLI's memory of spec validations between runs (a SpecValidationMemo, spec-loader.ts): a
// `grove check`, `score` or `export-context` whose specs have not changed since the last run in
// that worktree takes each spec's validation from here, and never loads the YAML parser or the
// schema library (~30 ms of each run at start-up). One JSON file per worktree in the user's cache
// directory (platform/user-cache-directory.ts: an absolute path the user alone can write), never in
// the worktree: a file the repository could commit would let it hand Grove a "validated" spec that
// never was. An entry holds for one spec path and the SHA-256 of its text, under one build of the
// validator (VALIDATOR_BUILD; one file per worktree and build, files unwritten for 30 days swept);
// entries of specs not loaded in a run are dropped when it saves.
// Not remembered: values JSON cannot give back exactly (an infinite number, -0, a `__proto__` key,
// an object two aliases share or a cycle), strings past 4x the spec's own length (aliases of a long
// string), an error that depends on the stack's depth. A missing, unreadable, oversized, malformed
// or ill-shaped file or entry is a miss; nothing here throws, and a failed write leaves the last
// file whole (a new file is renamed over it).
import { sha256Hex as sha256 } from '../../platform/builtins.ts';
import { userCacheDirectory, WorktreeCacheFile } from '../../platform/user-cache-directory.ts';
import type { InvalidSpec, ValidatedSpec } from './spec-compile.ts';
import type { SpecValidationMemo } from './spec-loader.ts';

/** The memories' folder in the user cache directory. */
const FOLDER = 'validated-specs';
/** A memory file bigger than this is not read (a few KB per spec). */
export const MAX_STORE_BYTES = 16 * 1024 * 1024;
/**
 * A validation is remembered only if its strings come to at most this many characters per
 * character of the spec's text (plus 4 KiB): what a spec says, not what its aliases expand to.
 */
const MAX_ENTRY_CHARS_PER_TEXT_CHAR = 4;

/** One remembered validation, as stored: line tables as [key, line] pairs, no spec text. */
interface StoredEntry {
  sha256: string;
  validated: Record<string, unknown>;
}

interface StoreFile {
  identity: string;
  specs: Record<string, StoredEntry>;
}

/**
 * True when JSON.parse(JSON.stringify(value)) gives back exactly `value` in at most `maxChars`
 * characters of strings: plain objects and arrays, each reached once (a YAML alias shares an
 * object, and a self-referencing anchor makes a cycle: JSON would copy the one and never end the
 * other), finite numbers other than -0, no `__proto__` key. The string budget stops an alias of a
 * long string repeated a thousand times (60 MB of JSON from a 63 KB spec). Walks without
 * recursion, so a deep value costs no stack.
 */
export function survivesJson(value: unknown, maxChars = Number.POSITIVE_INFINITY): boolean {
  const seen = new Set<object>();
  const pending: unknown[] = [value];
  let chars = 0;
  while (pending.length > 0) {
    const item = pending.pop();
    if (item === null || typeof item === 'boolean') continue;
    if (typeof item === 'string') {
      chars += item.length;
      if (chars > maxChars) return false;
      continue;
    }
    if (typeof item === 'number') {
      if (!Number.isFinite(item) || Object.is(item, -0)) return false;
      continue;
    }
    if (typeof item !== 'object' || seen.has(item)) return false;
    seen.add(item);
    if (Array.isArray(item)) {
      pending.push(...(item as unknown[]));
      continue;
    }
    const prototype = Object.getPrototypeOf(item) as unknown;
    if (prototype !== Object.prototype && prototype !== null) return false;
    for (const [key, child] of Object.entries(item)) {
      if (key === '__proto__') return false;
      chars += key.length;
      pending.push(child);
    }
  }
  return true;
}

/**
 * Whether a validation is the same whatever the run: an error the parser hit on the stack's depth
 * ("Maximum call stack size exceeded") depends on the caller and the JIT's state, not on the text.
 */
function sameEveryRun(validated: ValidatedSpec | InvalidSpec): boolean {
  return validated.ok || !validated.errors.some((error) => /call stack/i.test(error.message));
}

/** A validation as stored (null: one JSON cannot give back exactly, or not the same every run). */
function stored(
  validated: ValidatedSpec | InvalidSpec,
  text: string,
): Record<string, unknown> | null {
  if (!sameEveryRun(validated)) return null;
  const out: Record<string, unknown> = validated.ok
    ? { ...validated, lines: [...validated.lines] }
    : {
        ...validated,
        ...(validated.parsed
          ? { parsed: { value: validated.parsed.value, lines: [...validated.parsed.lines] } }
          : {}),
      };
  return survivesJson(out, MAX_ENTRY_CHARS_PER_TEXT_CHAR * text.length + 4096) ? out : null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isLineTable = (value: unknown) =>
  Array.isArray(value) &&
  value.every(
    (pair) =>
      Array.isArray(pair) &&
      pair.length === 2 &&
      typeof pair[0] === 'string' &&
      typeof pair[1] === 'number',
  );
const isErrorList = (value: unknown) =>
  Array.isArray(value) &&
  value.every(
    (error) =>
      isRecord(error) &&
      typeof error['file'] === 'string' &&
      typeof error['message'] === 'string' &&
      (error['line'] === null || typeof error['line'] === 'number'),
  );

/** Whether a stored entry has the shape `stored` writes (else it is a miss). */
function wellFormed(entry: Record<string, unknown>): boolean {
  if (entry['ok'] === true) {
    return (
      isRecord(entry['spec']) &&
      isRecord(entry['spec']['artifacts']) &&
      isErrorList(entry['warnings']) &&
      isLineTable(entry['lines']) &&
      (entry['artifactsLine'] === null || typeof entry['artifactsLine'] === 'number')
    );
  }
  const parsed = entry['parsed'];
  return (
    entry['ok'] === false &&
    typeof entry['path'] === 'string' &&
    isErrorList(entry['errors']) &&
    (parsed === undefined ||
      (isRecord(parsed) && isRecord(parsed['value']) && isLineTable(parsed['lines'])))
  );
}

/** A stored validation as the loader's, its spec text put back. */
function restored(entry: Record<string, unknown>, text: string): ValidatedSpec | InvalidSpec {
  const linesOf = (pairs: unknown) => new Map(pairs as [string, number][]);
  if (entry['ok'] === true) {
    return { ...entry, lines: linesOf(entry['lines']) } as unknown as ValidatedSpec;
  }
  const parsed = entry['parsed'] as { value: Record<string, unknown>; lines: unknown } | undefined;
  return {
    ...entry,
    ...(parsed ? { parsed: { text, value: parsed.value, lines: linesOf(parsed.lines) } } : {}),
  } as unknown as InvalidSpec;
}

function isStoreFile(value: unknown, identity: string): value is StoreFile {
  return (
    isRecord(value) &&
    value['identity'] === identity &&
    isRecord(value['specs']) &&
    Object.values(value['specs']).every(
      (entry) =>
        isRecord(entry) && typeof entry['sha256'] === 'string' && isRecord(entry['validated']),
    )
  );
}

export class ValidatedSpecStore implements SpecValidationMemo {
  readonly #file: WorktreeCacheFile;
  readonly #identity: string;
  readonly #known: Map<string, StoredEntry>;
  /** What this run loaded: what the next run will find. */
  readonly #kept = new Map<string, StoredEntry>();
  #changed = false;
  /** Whether the specs were loaded through it (a run that failed before leaves the file alone). */
  #used = false;

  /**
   * The memory of the worktree at `root` (its real path), for the validator named by `identity`
   * (VALIDATOR_BUILD: another build of Grove remembers apart), in `directory` (the user cache
   * directory). A directory inside the worktree is not used: the repository could commit the file.
   */
  constructor(
    root: string,
    identity: string,
    directory: string | undefined = userCacheDirectory(),
  ) {
    this.#identity = identity;
    // One file per worktree and build: two builds used on one worktree do not replace each
    // other's memory at every run (old ones are swept).
    this.#file = new WorktreeCacheFile({
      root,
      folder: FOLDER,
      key: identity,
      extension: '.json',
      maxBytes: MAX_STORE_BYTES,
      directory,
    });
    this.#known = new Map(Object.entries(this.#read()?.specs ?? {}));
  }

  get(relative: string, text: string): ValidatedSpec | InvalidSpec | undefined {
    this.#used = true;
    const entry = this.#known.get(relative);
    if (entry === undefined || entry.sha256 !== sha256(text) || !wellFormed(entry.validated)) {
      return undefined;
    }
    this.#kept.set(relative, entry);
    return restored(entry.validated, text);
  }

  set(relative: string, text: string, validated: ValidatedSpec | InvalidSpec): void {
    this.#used = true;
    const entry = stored(validated, text);
    if (entry === null) return;
    this.#kept.set(relative, { sha256: sha256(text), validated: entry });
    this.#changed = true;
  }

  /**
   * Writes what this run loaded, when the specs were loaded and that differs from what was read;
   * never throws (a memory that cannot be written is only not there next time).
   */
  save(): void {
    if (!this.#file.usable || !this.#used) return;
    if (!this.#changed && this.#kept.size === this.#known.size) return;
    const file: StoreFile = { identity: this.#identity, specs: Object.fromEntries(this.#kept) };
    this.#file.write(JSON.stringify(file));
  }

  #read(): StoreFile | undefined {
    const text = this.#file.readText();
    if (text === undefined) return undefined;
    try {
      const value: unknown = JSON.parse(text);
      return isStoreFile(value, this.#identity) ? value : undefined;
    } catch {
      return undefined;
    }
  }
}
