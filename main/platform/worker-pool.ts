// The worktree process's one pool of worker threads, for every job that would hold the event loop:
// grep's searches (user regular expressions) and the engine's stat and BLAKE3 work. Jobs are named
// by kind; one worker entry (main/worktree/pool-worker.ts, at the top of the worktree stack because
// it runs the handlers of the layers below) dispatches each kind to its handler.
//
// - Size: one worker per core, at most four, started on first use, ended after IDLE_MS without
//   work (an idle worktree process should not carry extra V8 isolates).
// - Fairness: each job has an owner (a grep call, a hashing call); the next free worker takes the
//   oldest job of the owner running the fewest jobs, and an owner with nothing running that finds
//   every worker held (say by two runaway regular expressions) gets one of OVERFLOW_WORKERS extra
//   workers, so it is served at once instead of waiting for their deadline.
// - The reserve: owners with nothing running can take the overflow workers too (four hostile grep
//   calls of two clients are four owners), so one more worker, RESERVE_WORKERS, runs only jobs
//   that accept to be cut short (`reserve: true`): there the job's handler is told so
//   (`PoolRequest.onReserve`), does a bounded share of the job (grep: a few hundred KiB of text)
//   and answers with where it stopped; the caller queues the rest as an ordinary job. However many
//   long jobs hold the other workers, a short job of a new owner is served at once, and the job
//   that yielded loses nothing but its place.
// - Deadlines and cancellation: cancel(owner) drops the owner's queued jobs and terminates the
//   workers running them, so a pathological pattern never keeps a core; a job may also carry its
//   own deadline, which does the same for that job with a UserError `timed-out`.
// - Low-priority jobs (grep on the backtracking engine, which may burn its whole deadline) run on
//   workers of their own, at most LOW_PRIORITY_WORKERS, whose threads run at the lowest CPU
//   priority (Linux): they never hold a worker other jobs need, and they get the cores only when
//   nothing else wants them.
// - A job may retire its worker (`retire: true`): the worker is ended once the job is done, so the
//   garbage of a big spec's parse (~250 MB) goes with its isolate instead of waiting in its heap.
// - If a worker cannot start at all (a bundle without the worker entry), run() rejects with
//   WorkersUnavailableError and callers do the work on the main thread, in slices.
import { availableParallelism } from 'node:os';
import type { Transferable, Worker } from 'node:worker_threads';
import { nodeWorkerThreads } from './builtins.ts';
import { UserError } from './errors.ts';

/** Workers are ended after this long without work. */
export const IDLE_MS = 10_000;
/** Extra workers, beyond `size`, for owners that would otherwise wait behind held workers. */
export const OVERFLOW_WORKERS = 1;
/** Workers, beyond those, for jobs that stop after a bounded share when they run there. */
export const RESERVE_WORKERS = 1;
/** Workers for low-priority jobs, beyond the others. */
export const LOW_PRIORITY_WORKERS = 2;

/** What the pool posts to a worker, and what the worker answers. */
export interface PoolRequest {
  id: number;
  kind: string;
  payload: unknown;
  /** The job runs on the reserve worker: do a bounded share of it and say where it stopped. */
  onReserve?: true;
}
export type PoolReply =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };
/** The workerData of a pool worker. */
export interface PoolWorkerData {
  /** The worker gives its thread the lowest CPU priority before it takes a job. */
  lowPriority: boolean;
  /** Started ahead of work (WorkerPool.prestart): the worker loads what hashing needs at once. */
  prestarted?: boolean;
}

/** Raised for every job of a pool whose workers cannot start. */
export class WorkersUnavailableError extends Error {
  override name = 'WorkersUnavailableError';
}

export interface RunOptions {
  /** Groups jobs for fairness and for cancel(); default: a fresh owner (the job alone). */
  owner?: object;
  /** Cancels the job (queued: dropped; running: its worker is terminated). */
  signal?: AbortSignal;
  /** The job is stopped with a `timed-out` UserError after this long. */
  deadlineMs?: number;
  /** Buffers moved, not copied, to the worker. */
  transfer?: Transferable[];
  /** Runs on a low-priority worker, never on one that serves other jobs. */
  lowPriority?: boolean;
  /**
   * May run on the reserve worker when every other worker is held and its owner has nothing
   * running; its handler then gets `onReserve` and must answer after a bounded share of the work
   * (the caller runs the rest as another job).
   */
  reserve?: boolean;
  /**
   * The worker is ended once this job is done, and its heap with it: for jobs that leave hundreds
   * of MB of garbage (a big spec's parse), which an idle worker's heap would keep for a while.
   */
  retire?: boolean;
}

interface Job {
  /** Set when a worker takes it. */
  id?: number;
  kind: string;
  payload: unknown;
  owner: object;
  transfer: Transferable[];
  lowPriority: boolean;
  reserve: boolean;
  retire: boolean;
  resolve(value: unknown): void;
  reject(error: Error): void;
  /** Removes the job's deadline timer and abort listener. */
  settle(): void;
}

/** What a worker is for: any normal job, jobs that accept to be cut short, or low-priority jobs. */
type Role = 'normal' | 'reserve' | 'low';

interface Slot {
  worker: Worker;
  ready: boolean;
  role: Role;
  job?: Job;
}

export class WorkerPool {
  readonly size: number;
  readonly #workerUrl: URL;
  readonly #idleMs: number;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #idleTimer: NodeJS.Timeout | undefined;
  #unavailable: WorkersUnavailableError | undefined;

  constructor(workerUrl: URL, options: { size?: number; idleMs?: number } = {}) {
    this.#workerUrl = workerUrl;
    this.size = options.size ?? Math.max(1, Math.min(availableParallelism(), 4));
    this.#idleMs = options.idleMs ?? IDLE_MS;
  }

  /** Set once a worker failed to start: callers should work on the main thread. */
  get unavailable(): WorkersUnavailableError | undefined {
    return this.#unavailable;
  }

  /** Workers currently alive (for tests and the idle-memory checks). */
  get workerCount(): number {
    return this.#slots.size;
  }

  /** Jobs waiting for a worker (for tests). */
  get queuedCount(): number {
    return this.#queue.length;
  }

  /**
   * Starts the `size` normal workers now if they are not running, for work known to come, so that
   * their start (~40-100 ms each: a V8 isolate and Node's bootstrap) overlaps the caller's own work
   * instead of delaying its first jobs: a client of a big worktree (its first mark), a short-lived
   * `grove check` that will stat the governed files. `forHashing` has each worker load what hashing
   * needs (BLAKE3) while it waits. Idle, they end after IDLE_MS as any worker; jobs posted before a
   * worker is ready wait in its port.
   */
  prestart({ forHashing = false }: { forHashing?: boolean } = {}): void {
    if (this.#unavailable) return;
    while (this.#count('normal') < this.size) {
      if (this.#spawn('normal', forHashing) === undefined) return;
    }
    this.#scheduleIdle();
  }

  /** Runs one job of `kind` on a worker; resolves to what the kind's handler returned. */
  run<R>(kind: string, payload: unknown, options: RunOptions = {}): Promise<R> {
    if (this.#unavailable) return Promise.reject(this.#unavailable);
    options.signal?.throwIfAborted();
    return new Promise<R>((resolve, reject) => {
      const owner = options.owner ?? {};
      let timer: NodeJS.Timeout | undefined;
      const onAbort = (): void => this.#stop(job, abortReason(options.signal));
      const job: Job = {
        kind,
        payload,
        owner,
        transfer: options.transfer ?? [],
        lowPriority: options.lowPriority ?? false,
        reserve: (options.reserve ?? false) && !(options.lowPriority ?? false),
        retire: options.retire ?? false,
        resolve: (value) => resolve(value as R),
        reject,
        settle: () => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
        },
      };
      if (options.deadlineMs !== undefined) {
        timer = setTimeout(
          () =>
            this.#stop(
              job,
              new UserError(
                `a ${kind} job did not finish within ${options.deadlineMs! / 1000} s and was stopped`,
                { code: 'timed-out' },
              ),
            ),
          options.deadlineMs,
        );
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Drops `owner`'s queued jobs and terminates the workers running its jobs. */
  cancel(owner: object, reason: Error): void {
    for (const job of this.#queue.filter((queued) => queued.owner === owner)) {
      this.#stop(job, reason, false);
    }
    for (const slot of this.#slots) {
      if (slot.job?.owner === owner) this.#stop(slot.job, reason, false);
    }
    this.#pump();
  }

  /** Ends every worker (queued and running jobs are rejected). */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const closed = new Error('worker pool closed');
    for (const job of this.#queue.splice(0)) finish(job, closed);
    const slots = [...this.#slots];
    this.#slots.clear();
    for (const slot of slots) if (slot.job) finish(slot.job, closed);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /** Ends one job: dropped from the queue, or its worker terminated (and replaced on demand). */
  #stop(job: Job, reason: Error, pump = true): void {
    const queued = this.#queue.indexOf(job);
    if (queued !== -1) {
      this.#queue.splice(queued, 1);
      finish(job, reason);
    }
    for (const slot of this.#slots) {
      if (slot.job !== job) continue;
      slot.job = undefined;
      this.#slots.delete(slot);
      void slot.worker.terminate();
      finish(job, reason);
    }
    if (pump) this.#pump();
  }

  /** Jobs running per owner. */
  #running(): Map<object, number> {
    const counts = new Map<object, number>();
    for (const slot of this.#slots) {
      if (slot.job) counts.set(slot.job.owner, (counts.get(slot.job.owner) ?? 0) + 1);
    }
    return counts;
  }

  /** Workers of one role alive. */
  #count(role: Role): number {
    let count = 0;
    for (const slot of this.#slots) if (slot.role === role) count += 1;
    return count;
  }

  /**
   * Index of the queued job to run next among those `eligible`: of the owner running fewest, the
   * oldest; -1 if none is queued.
   */
  #nextIndex(running: Map<object, number>, eligible: (job: Job) => boolean): number {
    let best = -1;
    let fewest = Number.POSITIVE_INFINITY;
    for (let index = 0; index < this.#queue.length; index++) {
      if (!eligible(this.#queue[index]!)) continue;
      const count = running.get(this.#queue[index]!.owner) ?? 0;
      if (count < fewest) {
        fewest = count;
        best = index;
        if (count === 0) break;
      }
    }
    return best;
  }

  #pump(): void {
    this.#pumpRole('normal');
    this.#pumpRole('reserve');
    this.#pumpRole('low');
    this.#scheduleIdle();
  }

  /**
   * Hands queued jobs to free workers of one role, starting some: normal jobs to the `size`
   * workers (plus the overflow ones for an owner with nothing running), jobs that accept it of
   * owners with nothing running to the reserve, low-priority jobs to theirs.
   */
  #pumpRole(role: Role): void {
    while (this.#queue.length > 0) {
      const running = this.#running();
      const index = this.#nextIndex(running, (job) =>
        role === 'low'
          ? job.lowPriority
          : role === 'normal'
            ? !job.lowPriority
            : job.reserve && (running.get(job.owner) ?? 0) === 0,
      );
      if (index === -1) return;
      const starved = (running.get(this.#queue[index]!.owner) ?? 0) === 0;
      let slot = [...this.#slots].find(
        (candidate) => candidate.job === undefined && candidate.role === role,
      );
      if (slot === undefined) {
        const limit =
          role === 'low'
            ? LOW_PRIORITY_WORKERS
            : role === 'reserve'
              ? RESERVE_WORKERS
              : this.size + (starved ? OVERFLOW_WORKERS : 0);
        if (this.#count(role) >= limit) return;
        slot = this.#spawn(role);
        if (slot === undefined) return;
      }
      const [job] = this.#queue.splice(index, 1) as [Job];
      const id = this.#nextId++;
      job.id = id;
      slot.job = job;
      slot.worker.ref(); // busy: keep the process alive until the job is done
      const request: PoolRequest = {
        id,
        kind: job.kind,
        payload: job.payload,
        ...(role === 'reserve' ? { onReserve: true as const } : {}),
      };
      slot.worker.postMessage(request, job.transfer);
    }
  }

  #spawn(role: Role, prestarted = false): Slot | undefined {
    let worker: Worker;
    try {
      // Loaded with the first worker: a worktree process at rest has none (platform/builtins.ts).
      worker = new (nodeWorkerThreads().Worker)(this.#workerUrl, {
        workerData: { lowPriority: role === 'low', prestarted } satisfies PoolWorkerData,
      });
    } catch (error) {
      this.#fail(error);
      return undefined;
    }
    worker.unref();
    const slot: Slot = { worker, ready: false, role };
    this.#slots.add(slot);
    worker.on('message', (message: PoolReply | { ready: true }) => {
      if ('ready' in message) {
        slot.ready = true;
        return;
      }
      const job = slot.job;
      if (job === undefined || job.id !== message.id) return;
      slot.job = undefined;
      worker.unref();
      if (job.retire || (role === 'normal' && this.#count('normal') > this.size)) {
        // A job that asked for it, or an overflow worker: ended once its job is done.
        this.#slots.delete(slot);
        void worker.terminate();
      }
      if (message.ok) {
        job.settle();
        job.resolve(message.value);
      } else {
        finish(job, new Error(message.message));
      }
      this.#pump();
    });
    worker.on('error', (error) => {
      this.#slots.delete(slot);
      const job = slot.job;
      slot.job = undefined;
      if (!slot.ready) {
        this.#fail(error);
        if (job) finish(job, this.#unavailable!);
        return;
      }
      if (job) finish(job, error instanceof Error ? error : new Error(String(error)));
      this.#pump();
    });
    worker.on('exit', () => {
      if (!this.#slots.delete(slot)) return;
      const job = slot.job;
      slot.job = undefined;
      if (job) finish(job, new Error('a pool worker exited'));
      this.#pump();
    });
    return slot;
  }

  #fail(error: unknown): void {
    this.#unavailable ??= new WorkersUnavailableError(
      `worker threads cannot start: ${error instanceof Error ? error.message : String(error)}`,
    );
    for (const job of this.#queue.splice(0)) finish(job, this.#unavailable);
  }

  #scheduleIdle(): void {
    clearTimeout(this.#idleTimer);
    if ([...this.#slots].some((slot) => slot.job !== undefined)) return;
    if (this.#slots.size === 0) return;
    this.#idleTimer = setTimeout(() => {
      if ([...this.#slots].some((slot) => slot.job !== undefined)) return;
      const idle = [...this.#slots];
      this.#slots.clear();
      for (const slot of idle) void slot.worker.terminate();
    }, this.#idleMs);
    this.#idleTimer.unref();
  }
}

function finish(job: Job, error: Error): void {
  job.settle();
  job.reject(error);
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new UserError('cancelled', { code: 'cancelled' });
}

let shared: WorkerPool | undefined;

/**
 * The process-wide pool. Its worker entry is main/worktree/pool-worker.ts (from the sources); in
 * the worktree bundle (scripts/build-worktree.ts: one flat directory) it is `pool-worker.js` beside
 * the module that holds this code.
 */
export function workerPool(): WorkerPool {
  const bundled = !import.meta.url.endsWith('.ts');
  shared ??= new WorkerPool(
    new URL(bundled ? './pool-worker.js' : '../worktree/pool-worker.ts', import.meta.url),
  );
  return shared;
}
