// A small pool of worker threads for the engine's per-file work (file-jobs.ts): a job is cut
// into chunks spread over the workers (one per core, at most 4), so stat'ing and hashing 200,000
// files never blocks the worktree process's event loop and uses every core. Chunks cross as one
// NUL-joined string and typed arrays, which clone cheaply. Workers start lazily, do not keep the
// process alive, and are ended after IDLE_MS without work (an idle worktree process should not
// carry up to four extra V8 isolates); the next job starts them again. If worker threads cannot be
// started (a bundle without the worker entry) or one dies, chunks run on the main thread instead,
// yielding between chunks.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { fingerprintFiles, hashFilesConfined, KNOWN_STRIDE, runFileJob } from './file-jobs.ts';
import type {
  FileJob,
  FileJobResult,
  FileOutcome,
  FingerprintResult,
  HashedEntry,
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
 * Workers are ended after this long without work. Short: a worker costs memory while idle, and
 * restarting one is cheap next to a job (the watcher's recomputations come in bursts).
 */
export const IDLE_MS = 10_000;

interface Pending {
  resolve(result: FileJobResult): void;
  reject(error: Error): void;
}

interface PoolWorker {
  worker: Worker;
  busy: boolean;
}

export class FilePool {
  readonly size: number;
  #workers: PoolWorker[] = [];
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #broken = false;
  #closed = false;
  /** Chunks waiting for a free worker. */
  #queue: { id: number; job: FileJob }[] = [];
  readonly #idleMs: number;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(
    size = Math.max(1, Math.min(availableParallelism(), 4)),
    options: { idleMs?: number } = {},
  ) {
    this.size = size;
    this.#idleMs = options.idleMs ?? IDLE_MS;
  }

  /** Workers currently alive (for tests). */
  get workerCount(): number {
    return this.#workers.length;
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
      return { codes: inline.codes, hashed: inline.hashed };
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
    await Promise.all(
      chunkStarts(paths.length).map(async (start) => {
        const end = Math.min(start + CHUNK_SIZE, paths.length);
        const result = (await this.#runChunk(
          {
            kind: 'fingerprint',
            root,
            paths: paths.slice(start, end).join('\0'),
            known: known.slice(start * KNOWN_STRIDE, end * KNOWN_STRIDE),
          },
          signal,
        )) as FingerprintResult;
        codes.set(result.codes, start);
        for (const entry of result.hashed) hashed.push({ ...entry, index: entry.index + start });
      }),
    );
    return { codes, hashed };
  }

  /** Hashes files named by a client (mark_reconciled), confined to root. One outcome per path. */
  async hashConfined(
    root: string,
    paths: readonly string[],
    signal?: AbortSignal,
  ): Promise<FileOutcome[]> {
    if (paths.length <= MAIN_THREAD_MAX_PATHS) {
      signal?.throwIfAborted();
      const inline = hashFilesConfined(root, paths, MAIN_THREAD_HASH_BYTES);
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
    const parts = await Promise.all(
      chunkStarts(paths.length).map(
        async (start) =>
          (await this.#runChunk(
            {
              kind: 'hash-confined',
              root,
              paths: paths.slice(start, start + CHUNK_SIZE).join('\0'),
            },
            signal,
          )) as FileOutcome[],
      ),
    );
    return parts.flat();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    for (const { worker } of this.#workers) void worker.terminate();
    this.#workers = [];
    for (const pending of this.#pending.values()) pending.reject(new Error('file pool closed'));
    this.#pending.clear();
    this.#queue = [];
  }

  async #runChunk(job: FileJob, signal?: AbortSignal): Promise<FileJobResult> {
    signal?.throwIfAborted();
    if (this.#broken || this.#closed) {
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
      return runFileJob(job);
    }
    const id = this.#nextId++;
    try {
      return await new Promise<FileJobResult>((resolve, reject) => {
        this.#pending.set(id, { resolve, reject });
        this.#queue.push({ id, job });
        this.#dispatch();
      });
    } catch (error) {
      if (!this.#broken) throw error;
      return runFileJob(job);
    }
  }

  #dispatch(): void {
    clearTimeout(this.#idleTimer);
    while (this.#queue.length > 0) {
      const free = this.#freeWorker();
      if (!free) return;
      const next = this.#queue.shift();
      if (!next) return;
      free.busy = true;
      free.worker.postMessage(next);
    }
    this.#scheduleIdle();
  }

  /**
   * Once nothing is queued or running, ends the workers after #idleMs. Any dispatch clears the
   * timer first, and it is only armed with every worker free, so a chunk in flight is never cut.
   */
  #scheduleIdle(): void {
    if (this.#workers.length === 0 || this.#queue.length > 0) return;
    if (this.#workers.some((entry) => entry.busy)) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#queue.length > 0 || this.#workers.some((entry) => entry.busy)) return;
      const idle = this.#workers;
      this.#workers = [];
      for (const { worker } of idle) void worker.terminate();
    }, this.#idleMs);
    this.#idleTimer.unref();
  }

  #freeWorker(): PoolWorker | undefined {
    const idle = this.#workers.find((entry) => !entry.busy);
    if (idle) return idle;
    if (this.#workers.length >= this.size) return undefined;
    return this.#spawn();
  }

  #spawn(): PoolWorker | undefined {
    let worker: Worker;
    try {
      worker = new Worker(fileWorkerUrl());
    } catch {
      this.#fail(new Error('worker threads unavailable'));
      return undefined;
    }
    worker.unref();
    const entry: PoolWorker = { worker, busy: false };
    worker.on('message', (message: { id: number; result?: FileJobResult; error?: string }) => {
      entry.busy = false;
      const pending = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (message.error !== undefined) pending?.reject(new Error(message.error));
      else if (message.result !== undefined) pending?.resolve(message.result);
      this.#dispatch();
    });
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', () => {
      // Workers ended on purpose (idle, close, failure) are already out of the list.
      if (!this.#workers.includes(entry)) return;
      this.#workers = this.#workers.filter((other) => other !== entry);
      if (entry.busy) this.#fail(new Error('file worker exited'));
    });
    this.#workers.push(entry);
    return entry;
  }

  /** A worker could not start or crashed: everything outstanding runs on the main thread. */
  #fail(error: Error): void {
    this.#broken = true;
    for (const { worker } of this.#workers) void worker.terminate();
    this.#workers = [];
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    this.#queue = [];
  }
}

/**
 * From the sources the worker is `file-worker.ts` beside this module; in the worktree bundle
 * (scripts/build-worktree.ts: one flat directory) it is the `file-worker.js` entry beside it.
 */
function fileWorkerUrl(): URL {
  const bundled = !import.meta.url.endsWith('.ts');
  return new URL(bundled ? './file-worker.js' : './file-worker.ts', import.meta.url);
}

function chunkStarts(length: number): number[] {
  const starts: number[] = [];
  for (let start = 0; start < length; start += CHUNK_SIZE) starts.push(start);
  return starts;
}
