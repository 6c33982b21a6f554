// The engine's per-file work (file-jobs.ts: stat and BLAKE3) spread over the worktree process's
// worker pool (main/platform/worker-pool.ts, job kind `file-job`): a job is cut into chunks of
// CHUNK_SIZE paths, so stat'ing and hashing 200,000 files never blocks the event loop and uses
// every core. Chunks cross as one NUL-joined string and typed arrays, which clone cheaply. Small
// jobs run on the main thread at once (see MAIN_THREAD_MAX_PATHS). If worker threads cannot be
// started (a bundle without the worker entry) or a worker dies, chunks run on the main thread
// instead, yielding between chunks.
import { pauseIfAsked } from '../../platform/time-slices.ts';
import { workerPool, type WorkerPool } from '../../platform/worker-pool.ts';
import {
  confinedOutcomes,
  fingerprintFiles,
  hashFilesConfined,
  KNOWN_STRIDE,
  runFileJob,
  statFiles,
} from './file-jobs.ts';
import type {
  ConfinedResult,
  FileJob,
  FileJobResult,
  FileOutcome,
  FingerprintResult,
  HashedEntry,
  StatResult,
} from './file-jobs.ts';

/** Paths per chunk sent to a worker. */
export const CHUNK_SIZE = 4096;
/**
 * Jobs of at most this many paths run on the main thread, in one go (a few milliseconds of
 * synchronous stats): the first worker thread a process starts leaves ~20 MB behind for good, a
 * price a small worktree, or the watcher's recomputation of a few changed files, should not pay.
 */
export const MAIN_THREAD_MAX_PATHS = 1000;
/**
 * Bytes a main-thread job may hash in all (~2 ms of BLAKE3): a bigger file, or the file that would
 * pass this, and everything after it, go to the workers, so no file size holds the event loop.
 */
export const MAIN_THREAD_HASH_BYTES = 4 * 1024 * 1024;
/**
 * statAll's paths a one-shot command (the CLI: FileJobRunner's `statOnMainThreadUpTo`) stats on
 * its main thread: an lstat is ~2.5 us there, and each pool worker costs ~100 ms of CPU to start
 * (an isolate, Node's bootstrap, the bundle), so below this the workers' share of the cores costs
 * more than it saves (20,000 files under load: -27 % CPU in all, -20 % wall).
 */
export const CLI_MAIN_THREAD_STAT_PATHS = 50_000;

export class FileJobRunner {
  readonly #pool: WorkerPool;
  /** Set once the pool failed us: every later chunk runs on the main thread. */
  #broken = false;
  #closed = false;
  readonly #mainThreadStatPaths: number;

  /**
   * `pool`: the process-wide worker pool unless a test brings its own. `statOnMainThreadUpTo`:
   * statAll of at most this many paths runs on the main thread, in one go (default
   * MAIN_THREAD_MAX_PATHS; only for a process that serves no one else, as the CLI).
   */
  constructor(pool: WorkerPool = workerPool(), options: { statOnMainThreadUpTo?: number } = {}) {
    this.#pool = pool;
    this.#mainThreadStatPaths = Math.max(
      MAIN_THREAD_MAX_PATHS,
      options.statOnMainThreadUpTo ?? MAIN_THREAD_MAX_PATHS,
    );
  }

  /**
   * Starts the pool's workers ahead of jobs of more than MAIN_THREAD_MAX_PATHS paths that are
   * known to come (WorkerPool.prestart); nothing when the pool failed us or `paths` is smaller.
   */
  prestartFor(paths: number): void {
    if (paths > MAIN_THREAD_MAX_PATHS && !this.#broken && !this.#closed)
      this.#pool.prestart({ forHashing: true });
  }

  /**
   * Stats `paths` (relative to root); `known` holds KNOWN_STRIDE numbers per path (NaN size: no
   * stat row). Codes per path, and the stat rows of the files that had to be hashed.
   */
  async fingerprint(
    root: string,
    paths: readonly string[],
    known: Float64Array,
    signal?: AbortSignal,
  ): Promise<FingerprintResult> {
    if (paths.length <= MAIN_THREAD_MAX_PATHS) {
      signal?.throwIfAborted();
      const inline = fingerprintFiles(root, paths, known, MAIN_THREAD_HASH_BYTES);
      const start = inline.stoppedAt;
      if (start === undefined) return inline;
      const rest = await this.#fingerprintInWorkers(
        root,
        paths.slice(start),
        known.subarray(start * KNOWN_STRIDE),
        signal,
      );
      inline.codes.set(rest.codes, start);
      for (const entry of rest.hashed) inline.hashed.push({ ...entry, index: entry.index + start });
      for (const index of rest.linked) inline.linked.push(index + start);
      return { codes: inline.codes, hashed: inline.hashed, linked: inline.linked };
    }
    return this.#fingerprintInWorkers(root, paths, known, signal);
  }

  async #fingerprintInWorkers(
    root: string,
    paths: readonly string[],
    known: Float64Array,
    signal?: AbortSignal,
  ): Promise<FingerprintResult> {
    const codes = new Uint8Array(paths.length);
    const hashed: HashedEntry[] = [];
    const linked: number[] = [];
    const owner = {}; // the chunks of one job share the pool as one owner
    const plan = chunkPlan(paths.length, this.#pool.size);
    await Promise.all(
      plan.starts.map(async (start) => {
        const end = Math.min(start + plan.size, paths.length);
        const result = (await this.#runChunk(
          {
            kind: 'fingerprint',
            root,
            paths: paths.slice(start, end).join('\0'),
            known: known.slice(start * KNOWN_STRIDE, end * KNOWN_STRIDE),
          },
          owner,
          signal,
        )) as FingerprintResult;
        codes.set(result.codes, start);
        for (const entry of result.hashed) hashed.push({ ...entry, index: entry.index + start });
        for (const index of result.linked) linked.push(index + start);
      }),
    );
    return { codes, hashed, linked };
  }

  /**
   * lstat of every path (statFiles), on the workers, for a caller that compares with the stat rows
   * once it has read them (a CLI check reads them meanwhile: classify.ts). The chunks are posted
   * before this returns, so the workers start on them while the caller's thread goes on.
   */
  statAll(root: string, paths: readonly string[], signal?: AbortSignal): Promise<StatResult> {
    if (paths.length <= this.#mainThreadStatPaths) {
      return Promise.resolve().then(() => {
        signal?.throwIfAborted();
        return statFiles(root, paths);
      });
    }
    const codes = new Uint8Array(paths.length);
    const stats = new Float64Array(paths.length * KNOWN_STRIDE);
    const owner = {}; // the chunks of one job share the pool as one owner
    const plan = chunkPlan(paths.length, this.#pool.size);
    const done = Promise.all(
      plan.starts.map(async (start) => {
        const end = Math.min(start + plan.size, paths.length);
        const job: FileJob = { kind: 'stat', root, paths: paths.slice(start, end).join('\0') };
        const result = (await this.#runChunk(job, owner, signal)) as StatResult;
        codes.set(result.codes, start);
        stats.set(result.stats, start * KNOWN_STRIDE);
      }),
    );
    return done.then(() => ({ codes, stats }));
  }

  /** Hashes files named by a client (mark_reconciled), confined to root. One outcome per path. */
  async hashConfined(
    root: string,
    paths: readonly string[],
    signal?: AbortSignal,
  ): Promise<FileOutcome[]> {
    if (paths.length <= MAIN_THREAD_MAX_PATHS) {
      signal?.throwIfAborted();
      const inline = confinedOutcomes(hashFilesConfined(root, paths, MAIN_THREAD_HASH_BYTES));
      if (inline.length === paths.length) return inline;
      return [...inline, ...(await this.#hashInWorkers(root, paths.slice(inline.length), signal))];
    }
    return this.#hashInWorkers(root, paths, signal);
  }

  async #hashInWorkers(
    root: string,
    paths: readonly string[],
    signal?: AbortSignal,
  ): Promise<FileOutcome[]> {
    const owner = {}; // the chunks of one job share the pool as one owner
    const plan = chunkPlan(paths.length, this.#pool.size);
    // Each chunk's outcomes are unpacked as it comes back, while the workers hash the others.
    const parts = await Promise.all(
      plan.starts.map(async (start) =>
        confinedOutcomes(
          (await this.#runChunk(
            {
              kind: 'hash-confined',
              root,
              paths: paths.slice(start, start + plan.size).join('\0'),
            },
            owner,
            signal,
          )) as ConfinedResult,
        ),
      ),
    );
    return parts.flat();
  }

  /** Later jobs run on the main thread (the pool itself is shared and stays). */
  close(): void {
    this.#closed = true;
  }

  /**
   * One chunk on the pool. `owner` is the whole job: its chunks queue behind each other instead of
   * each counting as a new caller (which the pool would serve at once on an extra worker).
   */
  async #runChunk(job: FileJob, owner: object, signal?: AbortSignal): Promise<FileJobResult> {
    // Background work steps aside for clients' calls (time-slices.ts). Without a pause to wait
    // for, the job is posted at once (statAll's chunks leave before its caller goes on).
    const pause = pauseIfAsked(signal);
    if (pause) await pause;
    signal?.throwIfAborted();
    if (!this.#broken && !this.#closed) {
      try {
        return await this.#pool.run<FileJobResult>('file-job', job, {
          owner,
          ...(signal ? { signal } : {}),
        });
      } catch {
        signal?.throwIfAborted();
        // Workers cannot start, or one died: the work is the same on the main thread.
        this.#broken = true;
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
    return runFileJob(job);
  }
}

/**
 * Where each chunk of a job of `length` paths starts, and how long chunks are: at most CHUNK_SIZE
 * paths, as many chunks as a multiple of the pool's workers, all of one length (the last one
 * shorter), so every worker gets the same share and none finishes a long last chunk alone while
 * the others wait (20,001 paths in chunks of 4,096 left one worker three chunks, the other two).
 */
export function chunkPlan(length: number, workers: number): { starts: number[]; size: number } {
  const perRound = Math.max(1, workers);
  const count = Math.ceil(Math.ceil(length / CHUNK_SIZE) / perRound) * perRound;
  const size = Math.max(1, Math.ceil(length / Math.max(1, count)));
  const starts: number[] = [];
  for (let start = 0; start < length; start += size) starts.push(start);
  return { starts, size };
}
