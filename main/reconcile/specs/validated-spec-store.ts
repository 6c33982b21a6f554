// The CLI's memory of spec validations between runs (a SpecValidationMemo, spec-loader.ts): a
// `grove check`, `score` or `export-context` whose specs have not changed since the last run in
// that worktree takes each spec's validation from here, and never loads the YAML parser or the
// schema library (~30 ms of each run at start-up). One JSON file per worktree in the user's cache
// directory (platform/user-cache-directory.ts), never in the worktree: a file the repository could
// commit would let it hand Grove a "validated" spec that never was. An entry holds for one spec
// path and the SHA-256 of its text, under one build of the validator (SpecValidationMemo's
// identity); entries of specs not loaded in a run are dropped when it saves. Values that JSON
// cannot give back exactly (an infinite number, -0, a `__proto__` key) are not remembered. A
// missing, unreadable, oversized or malformed file is an empty memory, and a failed write leaves
// the last one whole (a new file is renamed over it).
import path from 'node:path';
import { nodeCrypto } from '../../platform/builtins.ts';
import {
  readCacheFile,
  userCacheDirectory,
  writeCacheFile,
} from '../../platform/user-cache-directory.ts';
import type { InvalidSpec, ValidatedSpec } from './spec-compile.ts';
import type { SpecValidationMemo } from './spec-loader.ts';

/** A memory file bigger than this is not read (a few KB per spec). */
export const MAX_STORE_BYTES = 16 * 1024 * 1024;

/** One remembered validation, as stored: line tables as [key, line] pairs, no spec text. */
interface StoredEntry {
  sha256: string;
  validated: Record<string, unknown>;
}

interface StoreFile {
  identity: string;
  specs: Record<string, StoredEntry>;
}

const sha256 = (text: string) => nodeCrypto().createHash('sha256').update(text).digest('hex');

/** True when JSON.parse(JSON.stringify(value)) gives back exactly `value`. */
export function survivesJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0);
  if (Array.isArray(value)) return value.every(survivesJson);
  if (typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.entries(value).every(([key, item]) => key !== '__proto__' && survivesJson(item));
}

/** A validation as stored (null: one JSON cannot give back exactly). */
function stored(validated: ValidatedSpec | InvalidSpec): Record<string, unknown> | null {
  const out: Record<string, unknown> = validated.ok
    ? { ...validated, lines: [...validated.lines] }
    : {
        ...validated,
        ...(validated.parsed
          ? { parsed: { value: validated.parsed.value, lines: [...validated.parsed.lines] } }
          : {}),
      };
  return survivesJson(out) ? out : null;
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
  if (value === null || typeof value !== 'object') return false;
  const file = value as Partial<StoreFile>;
  return (
    file.identity === identity &&
    typeof file.specs === 'object' &&
    file.specs !== null &&
    Object.values(file.specs).every(
      (entry: unknown) =>
        typeof entry === 'object' &&
        entry !== null &&
        typeof (entry as StoredEntry).sha256 === 'string' &&
        typeof (entry as StoredEntry).validated === 'object' &&
        (entry as StoredEntry).validated !== null,
    )
  );
}

export class ValidatedSpecStore implements SpecValidationMemo {
  readonly #directory: string;
  /** The memory's file, relative to the cache directory. */
  readonly #file: string;
  readonly #identity: string;
  readonly #known: Map<string, StoredEntry>;
  /** What this run loaded: what the next run will find. */
  readonly #kept = new Map<string, StoredEntry>();
  #changed = false;

  /**
   * The memory of the worktree at `root` (its real path), for the validator named by `identity`
   * (SpecValidationMemo's: another build of Grove remembers apart).
   */
  constructor(root: string, identity: string, directory = userCacheDirectory()) {
    this.#identity = identity;
    this.#directory = directory;
    this.#file = path.join('validated-specs', `${sha256(root)}.json`);
    this.#known = new Map(Object.entries(this.#read()?.specs ?? {}));
  }

  get(relative: string, text: string): ValidatedSpec | InvalidSpec | undefined {
    const entry = this.#known.get(relative);
    if (entry === undefined || entry.sha256 !== sha256(text)) return undefined;
    this.#kept.set(relative, entry);
    return restored(entry.validated, text);
  }

  set(relative: string, text: string, validated: ValidatedSpec | InvalidSpec): void {
    const entry = stored(validated);
    if (entry === null) return;
    this.#kept.set(relative, { sha256: sha256(text), validated: entry });
    this.#changed = true;
  }

  /** Writes what this run loaded, when it differs from what was read; never throws. */
  save(): void {
    if (!this.#changed && this.#kept.size === this.#known.size) return;
    const file: StoreFile = { identity: this.#identity, specs: Object.fromEntries(this.#kept) };
    writeCacheFile(this.#file, JSON.stringify(file), this.#directory);
  }

  #read(): StoreFile | undefined {
    const text = readCacheFile(this.#file, MAX_STORE_BYTES, this.#directory);
    if (text === undefined) return undefined;
    try {
      const value: unknown = JSON.parse(text);
      return isStoreFile(value, this.#identity) ? value : undefined;
    } catch {
      return undefined;
    }
  }
}
