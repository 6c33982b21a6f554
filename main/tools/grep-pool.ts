// A small pool of grep worker threads (grep-worker.ts), shared by every grep call of the process:
// started on first use, one per core up to four, ended after a while without work. It is fair
// between calls: the next free worker takes a chunk of the call running the fewest chunks (in
// submission order within a call), and a call with nothing running that finds every worker held
// (say by two runaway regular expressions) gets one of up to OVERFLOW_WORKERS extra workers, so
// it is served at once instead of waiting for their deadline. A caller can cancel its chunks (the client cancelled, or the search ran
// past its deadline — a runaway regular expression): queued chunks are dropped and workers busy
// with them are terminated, so a pathological pattern never keeps a core. If a worker cannot start
// at all (e.g. in a bundle that does not ship grep-worker.ts) the pool says so and grep searches in
// the main thread instead.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { GrepChunkRequest, GrepChunkResult } from './grep-search.ts';
import type { GrepWorkerReply, GrepWorkerRequest } from './grep-worker.ts';

/** Workers are ended after this long without work. */
const IDLE_MS = 30_000;
/** Extra workers, beyond `size`, for calls that would otherwise wait behind held workers. */
export const OVERFLOW_WORKERS = 2;

/** Raised for the chunks of a pool whose workers cannot start. */
export class WorkersUnavailableError extends Error {
  override name = 'WorkersUnavailableError';
}

interface Task {
  request: GrepChunkRequest;
  owner: object;
  resolve(result: GrepChunkResult): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  task?: Task & { id: number };
}

export class GrepPool {
  readonly size: number;
  readonly #workerUrl: URL;
  readonly #slots = new Set<Slot>();
  readonly #queue: Task[] = [];
  #nextId = 1;
  #idleTimer: NodeJS.Timeout | undefined;
  #unavailable: Error | undefined;

  constructor(workerUrl: URL, size = Math.max(1, Math.min(availableParallelism(), 4))) {
    this.#workerUrl = workerUrl;
    this.size = size;
  }

  /** Set once a worker failed to start: callers should search in the main thread. */
  get unavailable(): Error | undefined {
    return this.#unavailable;
  }

  /** Workers currently alive (for tests). */
  get workerCount(): number {
    return this.#slots.size;
  }

  /** Runs one chunk on a worker. `owner` groups the chunks of one search for cancel(). */
  run(request: GrepChunkRequest, owner: object): Promise<GrepChunkResult> {
    if (this.#unavailable) return Promise.reject(this.#unavailable);
    return new Promise((resolve, reject) => {
      this.#queue.push({ request, owner, resolve, reject });
      this.#pump();
    });
  }

  /** Drops `owner`'s queued chunks and terminates the workers running its chunks. */
  cancel(owner: object, reason: Error): void {
    for (let index = this.#queue.length - 1; index >= 0; index--) {
      const task = this.#queue[index]!;
      if (task.owner !== owner) continue;
      this.#queue.splice(index, 1);
      task.reject(reason);
    }
    for (const slot of this.#slots) {
      if (slot.task?.owner !== owner) continue;
      const task = slot.task;
      slot.task = undefined;
      this.#slots.delete(slot);
      void slot.worker.terminate();
      task.reject(reason);
    }
    this.#pump();
  }

  /** Ends every worker (queued chunks are rejected). */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const closed = new Error('grep pool closed');
    for (const task of this.#queue.splice(0)) task.reject(closed);
    const slots = [...this.#slots];
    this.#slots.clear();
    for (const slot of slots) slot.task?.reject(closed);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /** Chunks running per owner. */
  #running(): Map<object, number> {
    const counts = new Map<object, number>();
    for (const slot of this.#slots) {
      if (slot.task) counts.set(slot.task.owner, (counts.get(slot.task.owner) ?? 0) + 1);
    }
    return counts;
  }

  /** Index of the queued chunk to run next: of the owner running fewest, the oldest. */
  #nextIndex(running: Map<object, number>): number {
    let best = 0;
    let fewest = Number.POSITIVE_INFINITY;
    for (let index = 0; index < this.#queue.length; index++) {
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
    while (this.#queue.length > 0) {
      const running = this.#running();
      const index = this.#nextIndex(running);
      const starved = (running.get(this.#queue[index]!.owner) ?? 0) === 0;
      let slot = [...this.#slots].find((candidate) => candidate.task === undefined);
      if (slot === undefined) {
        const limit = this.size + (starved ? OVERFLOW_WORKERS : 0);
        if (this.#slots.size >= limit) return;
        slot = this.#spawn();
        if (slot === undefined) return;
      }
      const [task] = this.#queue.splice(index, 1) as [Task];
      const id = this.#nextId++;
      slot.task = { ...task, id };
      slot.worker.ref(); // busy: keep the process alive until the chunk is done
      const message: GrepWorkerRequest = { id, request: task.request };
      slot.worker.postMessage(message);
    }
    this.#scheduleIdle();
  }

  #spawn(): Slot | undefined {
    let worker: Worker;
    try {
      worker = new Worker(this.#workerUrl);
    } catch (error) {
      this.#fail(error);
      return undefined;
    }
    const slot: Slot = { worker, ready: false };
    this.#slots.add(slot);
    worker.on('message', (message: GrepWorkerReply | { ready: true }) => {
      if ('ready' in message) {
        slot.ready = true;
        return;
      }
      const task = slot.task;
      if (task === undefined || task.id !== message.id) return;
      slot.task = undefined;
      worker.unref();
      if (this.#slots.size > this.size) {
        // An overflow worker: ended once its chunk is done.
        this.#slots.delete(slot);
        void worker.terminate();
      }
      if (message.ok) task.resolve(message.result);
      else task.reject(new Error(message.message));
      this.#pump();
    });
    worker.on('error', (error) => {
      this.#slots.delete(slot);
      const task = slot.task;
      slot.task = undefined;
      if (!slot.ready) {
        this.#fail(error);
        task?.reject(this.#unavailable!);
        return;
      }
      task?.reject(error instanceof Error ? error : new Error(String(error)));
      this.#pump();
    });
    worker.on('exit', () => {
      if (!this.#slots.delete(slot)) return;
      const task = slot.task;
      slot.task = undefined;
      task?.reject(new Error('grep worker exited'));
      this.#pump();
    });
    return slot;
  }

  #fail(error: unknown): void {
    this.#unavailable ??= new WorkersUnavailableError(
      `grep workers cannot start: ${error instanceof Error ? error.message : String(error)}`,
    );
    for (const task of this.#queue.splice(0)) task.reject(this.#unavailable);
  }

  #scheduleIdle(): void {
    clearTimeout(this.#idleTimer);
    if ([...this.#slots].some((slot) => slot.task !== undefined)) return;
    if (this.#slots.size === 0) return;
    this.#idleTimer = setTimeout(() => void this.close(), IDLE_MS);
    this.#idleTimer.unref();
  }
}

let shared: GrepPool | undefined;

/**
 * The process-wide pool. From the sources the worker is `grep-worker.ts` beside this module; in a
 * bundle (this module inside `worktree-process.js`) it is the `grep-worker.js` entry beside it.
 */
export function grepPool(): GrepPool {
  const bundled = !import.meta.url.endsWith('.ts');
  shared ??= new GrepPool(
    new URL(bundled ? './grep-worker.js' : './grep-worker.ts', import.meta.url),
  );
  return shared;
}
