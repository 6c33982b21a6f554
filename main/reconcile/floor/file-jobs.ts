// The per-file work of the engine that has to be fast on 200,000 files: stat + BLAKE3 behind the
// stat fast path (fingerprint), and hashing files a client named for mark_reconciled (confined to
// the worktree). Written with synchronous fs calls on purpose: it runs inside worker threads
// (the worker pool's `file-job` kind, main/worktree/pool-worker.ts, fed by file-job-runner.ts), where blocking costs nothing and a sync stat is ~20x
// cheaper than a libuv round trip. Only if workers cannot start does file-job-runner.ts run it on the
// main thread, in small chunks.
import { closeSync, fstatSync, readSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import type * as BlakeHash from '@napi-rs/blake-hash';
import { VerifiedDirectories } from '../../platform/confined-fs.ts';
import { statRowValid } from './stat-fast-path.ts';

/** Files up to this size are read in one call; bigger ones in chunks of this size. */
export const READ_CHUNK_BYTES = 8 * 1024 * 1024;

/** Numbers per path in a fingerprint job's `known` array: size, mtimeMs, ino, recordedMs. */
export const KNOWN_STRIDE = 4;

/**
 * A job as it crosses to a worker: paths joined with NUL (one string clones far faster than
 * thousands), the stat rows as one Float64Array (NaN size: no row).
 */
export type FileJob =
  | { kind: 'fingerprint'; root: string; paths: string; known: Float64Array }
  | { kind: 'stat'; root: string; paths: string }
  | { kind: 'hash-confined'; root: string; paths: string };

/** Fingerprint outcome codes (one byte per path). */
export const MISSING = 0;
export const HIT = 1;
export const HASHED = 2;

/** A file read and hashed by a fingerprint job: a new stat row. */
export interface HashedEntry {
  /** Index of the path in the job. */
  index: number;
  hash: string;
  size: number;
  mtimeMs: number;
  ino: number;
  recordedMs: number;
}

export interface FingerprintResult {
  /** MISSING (not a readable regular file), HIT (the stat row still holds) or HASHED. */
  codes: Uint8Array;
  hashed: HashedEntry[];
  /** Indexes of the regular files with more than one name (hard links): none kept between calls. */
  linked: number[];
  /**
   * Set when the job stopped at this index because hashing the file there would have passed its
   * byte budget (a main-thread job): the paths from here on were not looked at.
   */
  stoppedAt?: number;
}

/**
 * Per path of a hash-confined job: `missing`, `hashed`, `directory`, `special` (FIFO,
 * device...), or `refer` (not provably inside the worktree: the engine asks the sandbox, which
 * explains why).
 */
export type FileOutcome =
  | { code: 'missing' }
  | {
      code: 'hashed';
      hash: string;
      size: number;
      mtimeMs: number;
      ino: number;
      recordedMs: number;
      /** The file has more than one name (a hard link): a write through another sends no event. */
      linked?: true;
    }
  | { code: 'directory' }
  | { code: 'special' }
  | { code: 'refer' };

/** A hash-confined job's outcome codes, in ConfinedResult.codes (one byte per path). */
const CONFINED_CODES = ['missing', 'hashed', 'directory', 'special', 'refer'] as const;
const HASHED_CODE = CONFINED_CODES.indexOf('hashed');

/** Hex characters of one BLAKE3 hash. */
const HASH_HEX = 64;

/**
 * A hash-confined job's outcomes as they cross back from a worker: a few flat values instead of
 * thousands of objects (cloning 20,000 outcome objects cost the main thread 10-30 ms).
 */
export interface ConfinedResult {
  /** One code per path looked at (fewer than paths when a byte budget stopped the job). */
  codes: Uint8Array;
  /** The hashed files' BLAKE3 hashes, hex, in path order, HASH_HEX characters each. */
  hashes: string;
  /** KNOWN_STRIDE numbers per path (size, mtimeMs, ino, recordedMs), set for hashed files. */
  stats: Float64Array;
  /** Indexes of the hashed files with more than one name (hard links). */
  linked: number[];
}

/** The outcomes of a hash-confined job, one per path looked at. */
export function confinedOutcomes(result: ConfinedResult): FileOutcome[] {
  const outcomes: FileOutcome[] = [];
  let hashed = 0;
  const linked = new Set(result.linked);
  for (let index = 0; index < result.codes.length; index++) {
    const code = CONFINED_CODES[result.codes[index] as number] ?? 'refer';
    if (code !== 'hashed') {
      outcomes.push({ code });
      continue;
    }
    const base = index * KNOWN_STRIDE;
    outcomes.push({
      code,
      hash: result.hashes.slice(hashed * HASH_HEX, (hashed + 1) * HASH_HEX),
      size: result.stats[base] as number,
      mtimeMs: result.stats[base + 1] as number,
      ino: result.stats[base + 2] as number,
      recordedMs: result.stats[base + 3] as number,
      ...(linked.has(index) ? { linked: true as const } : {}),
    });
    hashed++;
  }
  return outcomes;
}

/**
 * A stat job's answer, the first half of a fingerprint without the stat rows (a CLI's check sends
 * it before it has read them, classify.ts): per path MISSING or FILE, and for a file its size,
 * mtimeMs, inode and the clock read before its lstat (KNOWN_STRIDE numbers per path).
 */
export interface StatResult {
  codes: Uint8Array;
  stats: Float64Array;
}
/** A stat job's code for a regular file (MISSING: anything else). */
export const FILE = 1;

export type FileJobResult = FingerprintResult | ConfinedResult | StatResult;

/** Runs a job synchronously (in a worker, or on the main thread as a fallback). */
export function runFileJob(job: FileJob): FileJobResult {
  const paths = job.paths === '' ? [] : job.paths.split('\0');
  return job.kind === 'fingerprint'
    ? fingerprintFiles(job.root, paths, job.known)
    : job.kind === 'stat'
      ? statFiles(job.root, paths)
      : hashFilesConfined(job.root, paths);
}

/**
 * lstat of every path, as fingerprintFiles looks each up (in its directory proved inside the
 * worktree, never through a final symlink: anything but a regular file is MISSING), reading
 * nothing. Paths of one directory come together (git's order): VerifiedDirectories.lstatText
 * looks the directory up once per run of them and needs no Buffer per path.
 */
export function statFiles(root: string, paths: readonly string[]): StatResult {
  const codes = new Uint8Array(paths.length);
  const stats = new Float64Array(paths.length * KNOWN_STRIDE);
  const directories = new VerifiedDirectories(root, { strict: false });
  try {
    for (let index = 0; index < paths.length; index++) {
      const relative = paths[index] as string;
      const slash = relative.lastIndexOf('/');
      const recordedMs = Date.now();
      const info = directories.lstatText(
        slash < 0 ? '' : relative.slice(0, slash),
        relative.slice(slash + 1),
      );
      if (!info || !info.isFile()) continue; // MISSING (0)
      codes[index] = FILE;
      const base = index * KNOWN_STRIDE;
      stats[base] = info.size;
      stats[base + 1] = info.mtimeMs;
      stats[base + 2] = info.ino;
      stats[base + 3] = recordedMs;
    }
  } finally {
    directories.close();
  }
  return { codes, stats };
}

/** A worktree-relative POSIX path split into its directory and name, as bytes. */
function splitRelative(relative: string): { directory: Buffer; name: Buffer } {
  const slash = relative.lastIndexOf('/');
  return slash < 0
    ? { directory: EMPTY, name: Buffer.from(relative) }
    : {
        directory: Buffer.from(relative.slice(0, slash)),
        name: Buffer.from(relative.slice(slash + 1)),
      };
}
const EMPTY = Buffer.alloc(0);

/**
 * Stat every path; where the stat row (size, mtime, inode, recorded time) still holds, the file
 * is not read (HIT), otherwise it is hashed (HASHED, with its new stat row). Every path is looked
 * up in its directory proved inside the worktree (VerifiedDirectories), never through a final
 * symlink: a symlink, FIFO, device or anything outside the worktree is MISSING.
 */
export function fingerprintFiles(
  root: string,
  paths: readonly string[],
  known: Float64Array,
  hashBudgetBytes = Number.POSITIVE_INFINITY,
): FingerprintResult {
  const codes = new Uint8Array(paths.length);
  const hashed: HashedEntry[] = [];
  const linked: number[] = [];
  const directories = new VerifiedDirectories(root, { strict: false });
  let budget = hashBudgetBytes;
  try {
    for (let index = 0; index < paths.length; index++) {
      const { directory, name } = splitRelative(paths[index] as string);
      const recordedMs = Date.now();
      const info = directories.lstat(directory, name);
      if (!info || !info.isFile()) {
        codes[index] = MISSING;
        continue;
      }
      if (info.nlink > 1) linked.push(index);
      const base = index * KNOWN_STRIDE;
      const size = known[base] as number;
      if (
        !Number.isNaN(size) &&
        statRowValid(
          {
            size,
            mtimeMs: known[base + 1] as number,
            ino: known[base + 2] as number,
            recordedMs: known[base + 3] as number,
            hash: '',
          },
          info.size,
          info.mtimeMs,
          info.ino,
        )
      ) {
        codes[index] = HIT;
        continue;
      }
      if (info.size > budget) return { codes, hashed, linked, stoppedAt: index };
      budget -= info.size;
      const outcome = hashInDirectory(directories, directory, name);
      if (typeof outcome === 'object') {
        hashed.push({
          index,
          hash: outcome.hash,
          size: outcome.info.size,
          mtimeMs: outcome.info.mtimeMs,
          ino: outcome.info.ino,
          recordedMs,
        });
        codes[index] = HASHED;
      } else {
        codes[index] = MISSING;
      }
    }
  } finally {
    directories.close();
  }
  return { codes, hashed, linked };
}

/**
 * Hashes files named by a client, confined to root: each file is opened in its directory proved
 * inside the worktree and not in .git (symlinked directories that stay inside are followed), never
 * through a final symlink, never waiting on a FIFO. Anything unusual (a symlink, a missing path,
 * an error) is `refer`: the engine then asks the confined layer, which words the refusal. With a
 * byte budget (a main-thread job), stops before the file that would pass it: fewer codes than
 * paths then, and the rest is for a worker.
 */
export function hashFilesConfined(
  root: string,
  paths: readonly string[],
  hashBudgetBytes = Number.POSITIVE_INFINITY,
): ConfinedResult {
  const directories = new VerifiedDirectories(root, { strict: false });
  const codes = new Uint8Array(paths.length);
  const stats = new Float64Array(paths.length * KNOWN_STRIDE);
  const hashes: string[] = [];
  const linked: number[] = [];
  let looked = 0;
  const budget = { bytes: hashBudgetBytes };
  try {
    for (; looked < paths.length; looked++) {
      const { directory, name } = splitRelative(paths[looked] as string);
      const recordedMs = Date.now();
      const outcome = hashInDirectory(directories, directory, name, budget);
      if (outcome === 'over-budget') break;
      if (typeof outcome === 'string') {
        codes[looked] = CONFINED_CODES.indexOf(outcome);
        continue;
      }
      codes[looked] = HASHED_CODE;
      hashes.push(outcome.hash);
      const base = looked * KNOWN_STRIDE;
      stats[base] = outcome.info.size;
      stats[base + 1] = outcome.info.mtimeMs;
      stats[base + 2] = outcome.info.ino;
      stats[base + 3] = recordedMs;
      if (outcome.info.nlink > 1) linked.push(looked);
    }
  } finally {
    directories.close();
  }
  return {
    codes: codes.subarray(0, looked),
    hashes: hashes.join(''),
    stats: stats.subarray(0, looked * KNOWN_STRIDE),
    linked,
  };
}

/** A regular file read whole: its BLAKE3 hash (hex) and the fstat it was read by. */
interface Digested {
  hash: string;
  info: Stats;
}

function hashInDirectory(
  directories: VerifiedDirectories,
  directory: Buffer,
  name: Buffer,
  budget?: { bytes: number },
): Digested | 'directory' | 'special' | 'refer' | 'over-budget' {
  let fd: number | null;
  try {
    fd = directories.openFile(directory, name);
  } catch {
    return 'refer';
  }
  if (fd === null) return 'refer';
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) return 'directory';
    if (!info.isFile()) return 'special';
    if (budget) {
      if (info.size > budget.bytes) return 'over-budget';
      budget.bytes -= info.size;
    }
    return { hash: hashDescriptor(fd, info.size), info };
  } catch {
    return 'refer';
  } finally {
    closeSync(fd);
  }
}

let blakeHash: typeof BlakeHash | undefined;
/**
 * The BLAKE3 binding, loaded by the first hash: a run that hashes nothing (`grove check` without a
 * hash cache) skips its dlopen and the C-library probe its loader makes (process.report).
 */
function blake(): typeof BlakeHash {
  return (blakeHash ??= createRequire(import.meta.url)('@napi-rs/blake-hash') as typeof BlakeHash);
}

/** Loads the BLAKE3 binding ahead of the first hash (a worker started ahead of work). */
export function loadHashing(): void {
  blake();
}

/**
 * Where a pool worker reads files: one buffer it keeps, reused file after file and grown to the
 * biggest file read so far (up to SCRATCH_MAX_BYTES), instead of a new one per file. A Buffer per
 * file was an ArrayBuffer outside V8's heap each time (most files pass the 4 KiB Buffer pool):
 * thousands of them a job, each traced, swept and freed by the garbage collector. The main thread
 * (small jobs, a few files) reads into a Buffer per file as before: it keeps nothing at rest.
 */
let scratch: Buffer | undefined;
let keepScratch = false;
/** The reused buffer's size at most: a bigger file gets a buffer of its own. */
const SCRATCH_MAX_BYTES = 256 * 1024;

/** Called by a pool worker (main/worktree/pool-worker.ts): it reads into a buffer it keeps. */
export function keepReadBuffer(): void {
  keepScratch = true;
}

function readBuffer(size: number): Buffer {
  if (!keepScratch || size > SCRATCH_MAX_BYTES) return Buffer.allocUnsafe(size);
  if (scratch === undefined || scratch.length < size) {
    scratch = Buffer.allocUnsafeSlow(Math.max(size, 64 * 1024));
  }
  return scratch;
}

let hasher: BlakeHash.Blake3Hasher | undefined;
/**
 * BLAKE3 of an open file's bytes, as hex: one read when small, streamed in chunks when big. One
 * hasher per thread, reset for each file, gives the hex string at once (`blake3()` made a Buffer
 * per file, outside V8's heap, only to turn it into hex).
 */
function hashDescriptor(fd: number, size: number): string {
  const state = (hasher ??= new (blake().Blake3Hasher)());
  state.reset();
  if (size <= READ_CHUNK_BYTES) {
    const buffer = readBuffer(size);
    let filled = 0;
    while (filled < size) {
      const read = readSync(fd, buffer, filled, size - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    return state.update(buffer.subarray(0, filled)).digest('hex');
  }
  const buffer = readBuffer(READ_CHUNK_BYTES);
  let position = 0;
  for (;;) {
    const read = readSync(fd, buffer, 0, READ_CHUNK_BYTES, position);
    if (read === 0) break;
    state.update(buffer.subarray(0, read));
    position += read;
  }
  return state.digest('hex');
}
