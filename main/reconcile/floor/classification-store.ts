// The CLI's memory of its last classification, between runs: a `grove check` or `grove score`
// run again on a worktree classifies only the governed files that changed since, instead of
// reading both cache databases whole (~55 ms of a 280 ms run at 20,000 files) and comparing every
// file with them. Classification is per file, so a memory of one is a fact per path: NotarAI's
// hash cache has a row for it, and the file, with this stat, hashed to that row's hash or not.
//
// A fact holds while both things it came from hold:
// - NotarAI's database is the same (CacheDatabase.fingerprint: its lstat and the change counter
//   SQLite's header moves at every write transaction). Another fingerprint: nothing is recalled.
// - The file has the same size, mtime and inode, by the stat fast path's rule (stat-fast-path.ts,
//   with git's racy-timestamp guard), as the stat pass of this run sees it. A fact about a path
//   without a row needs no stat (no row: changed, whatever the file); one about a row whose file
//   is gone needs none either (missing, while it is not a regular file).
// What is not recalled is classified as before, with the two databases' rows of those paths alone
// when they are few. The memory is one file per worktree in the user's cache directory
// (platform/user-cache-directory.ts), never in the worktree (a repository could commit a memory
// saying its files match). A missing, unreadable, oversized or malformed file is an empty memory;
// nothing here throws, and a write is whole (a new file renamed over the old).
import { userCacheDirectory, WorktreeCacheFile } from '../../platform/user-cache-directory.ts';
import { FILE, KNOWN_STRIDE, type StatResult } from './file-jobs.ts';
import { statRowValid } from './stat-fast-path.ts';

/** The memories' folder in the user cache directory. */
const FOLDER = 'classifications';
/** The first bytes of a memory file: its format (another format is an empty memory). */
const MAGIC = Buffer.from('grove classification 1\n', 'latin1');
/** A memory bigger than this is neither read nor written (~50 bytes a file). */
export const MAX_MEMORY_BYTES = 256 * 1024 * 1024;

/** What is remembered per path (bits). */
export const HAS_ROW = 1;
/** With HAS_STAT: the file, at that stat, hashed to its row's hash. */
export const MATCHES_ROW = 2;
/** The stat (size, mtime, inode, when recorded) the fact is about is kept. */
export const HAS_STAT = 4;

/** What a recall says of a path. */
export const UNKNOWN = 0;
export const UNCHANGED = 1;
export const CHANGED = 2;
export const MISSING = 3;

/** A recall: a verdict per path asked, and what is remembered of it (for the next memory). */
export interface Recall {
  verdicts: Uint8Array;
  facts: Uint8Array;
  /** KNOWN_STRIDE numbers per path (NaN without HAS_STAT). */
  stats: Float64Array;
}

interface Memory {
  fingerprint: string;
  /** The paths, joined with NUL (git's paths hold none). */
  joined: string;
  facts: Uint8Array;
  stats: Float64Array;
}

export class ClassificationStore {
  readonly #file: WorktreeCacheFile;
  /** What was read (null: nothing usable), read on the first recall. */
  #read: Memory | null | undefined;
  /** What the next run will find, once remembered. */
  #next: Memory | undefined;
  /** The paths last recalled, and them joined (remember takes the same list again). */
  #joined: { paths: readonly string[]; joined: string } | undefined;

  /** The memory of the worktree at `root` (its real path), in `directory` (the user's cache). */
  constructor(root: string, directory: string | undefined = userCacheDirectory()) {
    this.#file = new WorktreeCacheFile({
      root,
      folder: FOLDER,
      key: MAGIC.toString('latin1'),
      extension: '.bin',
      maxBytes: MAX_MEMORY_BYTES,
      directory,
    });
  }

  /**
   * What is remembered of `paths` (unique) under `fingerprint`, given this run's stat of each
   * (`stated`, in the same order): UNKNOWN where nothing holds any more (everywhere without a
   * fingerprint: NotarAI's database cannot be told apart from another).
   */
  recall(fingerprint: string | undefined, paths: readonly string[], stated: StatResult): Recall {
    const count = paths.length;
    const recall: Recall = {
      verdicts: new Uint8Array(count),
      facts: new Uint8Array(count),
      stats: new Float64Array(count * KNOWN_STRIDE).fill(Number.NaN),
    };
    const memory = this.#memory();
    if (fingerprint === undefined || memory?.fingerprint !== fingerprint) return recall;
    if (memory.facts.length === 0) return recall;
    const joined = this.#join(paths);
    let at: (index: number) => number | undefined = (index) => index;
    if (joined !== memory.joined) {
      const positions = new Map<string, number>();
      memory.joined.split('\0').forEach((file, index) => positions.set(file, index));
      at = (index) => positions.get(paths[index] as string);
    }
    const { codes, stats } = stated;
    for (let index = 0; index < count; index++) {
      const from = at(index);
      if (from === undefined) continue;
      const facts = memory.facts[from] as number;
      let verdict = UNKNOWN;
      if ((facts & HAS_ROW) === 0) {
        verdict = CHANGED; // NotarAI's rule: no row, changed
      } else if (codes[index] !== FILE) {
        verdict = MISSING;
      } else if ((facts & HAS_STAT) !== 0) {
        const kept = from * KNOWN_STRIDE;
        const base = index * KNOWN_STRIDE;
        const row = {
          size: memory.stats[kept] as number,
          mtimeMs: memory.stats[kept + 1] as number,
          ino: memory.stats[kept + 2] as number,
          hash: '',
          recordedMs: memory.stats[kept + 3] as number,
        };
        if (statRowValid(row, stats[base]!, stats[base + 1]!, stats[base + 2]!)) {
          verdict = (facts & MATCHES_ROW) !== 0 ? UNCHANGED : CHANGED;
          recall.stats.set(memory.stats.subarray(kept, kept + KNOWN_STRIDE), base);
        }
      }
      if (verdict === UNKNOWN) continue;
      recall.verdicts[index] = verdict;
      recall.facts[index] = verdict === MISSING ? HAS_ROW : facts;
    }
    return recall;
  }

  /**
   * What the next run finds: the facts of `paths` (KNOWN_STRIDE stat numbers each) under
   * `fingerprint`, taken before any row they came from was read. Written by `save`, only if it
   * differs from what was read.
   */
  remember(fingerprint: string, paths: readonly string[], facts: Uint8Array, stats: Float64Array) {
    this.#next = { fingerprint, joined: this.#join(paths), facts, stats };
  }

  #join(paths: readonly string[]): string {
    if (this.#joined?.paths !== paths) this.#joined = { paths, joined: paths.join('\0') };
    return this.#joined.joined;
  }

  /** Writes what was remembered, when it differs from what was read; never throws. */
  save(): void {
    const next = this.#next;
    if (!this.#file.usable || next === undefined) return;
    const read = this.#read ?? undefined;
    if (
      read !== undefined &&
      read.fingerprint === next.fingerprint &&
      read.joined === next.joined &&
      sameBytes(read.facts, next.facts) &&
      sameBytes(read.stats, next.stats)
    ) {
      return;
    }
    this.#file.write(encode(next));
  }

  #memory(): Memory | undefined {
    if (this.#read === undefined) {
      const bytes = this.#file.readBytes();
      this.#read = (bytes && decode(bytes)) ?? null;
    }
    return this.#read ?? undefined;
  }
}

/** Byte-for-byte equality of two typed arrays (NaN stats compare by their bits). */
function sameBytes(one: ArrayBufferView, other: ArrayBufferView): boolean {
  return Buffer.from(one.buffer, one.byteOffset, one.byteLength).equals(
    Buffer.from(other.buffer, other.byteOffset, other.byteLength),
  );
}

/**
 * The file: MAGIC; the fingerprint's length (u32, little-endian) and its UTF-8; the path count and
 * the joined paths' length (u32 each) and their UTF-8; zeros up to a multiple of 8 bytes; the stat
 * numbers (f64, little-endian); one byte of facts per path.
 */
function encode(memory: Memory): Buffer {
  const fingerprint = Buffer.from(memory.fingerprint, 'utf8');
  const joined = Buffer.from(memory.joined, 'utf8');
  const count = memory.facts.length;
  const head = MAGIC.length + 4 + fingerprint.length + 8 + joined.length;
  const statsAt = Math.ceil(head / 8) * 8;
  const bytes = Buffer.alloc(statsAt + count * KNOWN_STRIDE * 8 + count);
  let at = MAGIC.copy(bytes, 0);
  at = bytes.writeUInt32LE(fingerprint.length, at);
  at += fingerprint.copy(bytes, at);
  at = bytes.writeUInt32LE(count, at);
  at = bytes.writeUInt32LE(joined.length, at);
  joined.copy(bytes, at);
  const stats = new Float64Array(count * KNOWN_STRIDE);
  stats.set(memory.stats);
  Buffer.from(stats.buffer).copy(bytes, statsAt);
  bytes.set(memory.facts, statsAt + stats.byteLength);
  return bytes;
}

/** The memory in `bytes`, or undefined when they are not one `encode` wrote. */
function decode(bytes: Buffer): Memory | undefined {
  try {
    if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
    let at = MAGIC.length;
    const fingerprintLength = bytes.readUInt32LE(at);
    at += 4;
    if (at + fingerprintLength > bytes.length) return undefined;
    const fingerprint = bytes.toString('utf8', at, at + fingerprintLength);
    at += fingerprintLength;
    const count = bytes.readUInt32LE(at);
    const joinedLength = bytes.readUInt32LE(at + 4);
    at += 8;
    if (at + joinedLength > bytes.length) return undefined;
    const joined = bytes.toString('utf8', at, at + joinedLength);
    const statsAt = Math.ceil((at + joinedLength) / 8) * 8;
    const statsBytes = count * KNOWN_STRIDE * 8;
    if (statsAt + statsBytes + count !== bytes.length) return undefined;
    // One path per fact: as many NULs as paths less one (none in git's paths), none for no path.
    let separators = 0;
    for (let index = joined.indexOf('\0'); index >= 0; index = joined.indexOf('\0', index + 1)) {
      separators++;
    }
    if (count === 0 ? joinedLength !== 0 : separators !== count - 1) return undefined;
    // Copied out: a Float64Array needs an 8-byte aligned offset, which a read Buffer need not have.
    const stats = new Float64Array(count * KNOWN_STRIDE);
    new Uint8Array(stats.buffer).set(bytes.subarray(statsAt, statsAt + statsBytes));
    const facts = Uint8Array.from(bytes.subarray(statsAt + statsBytes));
    if (facts.some((value) => value > (HAS_ROW | MATCHES_ROW | HAS_STAT))) return undefined;
    return { fingerprint, joined, facts, stats };
  } catch {
    return undefined;
  }
}
