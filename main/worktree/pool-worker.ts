// Entry of every worker thread of the worktree process's pool (main/platform/worker-pool.ts):
// runs the job kinds below with synchronous calls (blocking only this thread) and posts each
// result back. It sits at the top of the worktree stack because it runs handlers from the layers
// below it. Holds no state between jobs.
import { setPriority } from 'node:os';
import { parentPort, workerData, type Transferable } from 'node:worker_threads';
import type { PoolReply, PoolRequest, PoolWorkerData } from '../platform/worker-pool.ts';
import {
  keepReadBuffer,
  loadHashing,
  runFileJob,
  type FileJob,
} from '../reconcile/floor/file-jobs.ts';
import { createSyncReader } from '../tools/grep-readers.ts';
import { RESERVE_GREP_BYTES, searchChunk, type GrepChunkRequest } from '../tools/grep-search.ts';

/** How a job runs: `onReserve` on the pool's reserve worker (a bounded share, then stop). */
interface JobContext {
  onReserve: boolean;
}

type Handler = (payload: never, context: JobContext) => unknown;

/**
 * A low-priority worker (jobs that may burn their whole deadline, such as a pattern only the
 * backtracking engine runs) gives its thread the lowest CPU priority: the other workers and the
 * main thread keep the cores. Linux only, where a thread's nice value is its own (elsewhere
 * setpriority(0) would lower the whole process).
 */
if ((workerData as PoolWorkerData | undefined)?.lowPriority && process.platform === 'linux') {
  try {
    setPriority(0, 19);
  } catch {
    // Not permitted: the job's deadline still bounds it.
  }
}

/** Files are read into one buffer the worker keeps (file-jobs.ts), not a new one per file. */
keepReadBuffer();

/** A worker started ahead of work (WorkerPool.prestart) is started for hashing: it loads that now. */
if ((workerData as PoolWorkerData | undefined)?.prestarted) {
  try {
    loadHashing();
  } catch {
    // The first hash reports it.
  }
}

/** The job kinds, by name: what each does with its payload. */
const handlers: Record<string, Handler> = {
  /** One chunk of a grep search (main/tools/grep.ts). */
  'grep-chunk': async (request: GrepChunkRequest, { onReserve }: JobContext) => {
    const reader = createSyncReader(request.root, request.maxFileBytes);
    try {
      const budget = onReserve ? { budgetBytes: RESERVE_GREP_BYTES } : {};
      return await searchChunk(request, (file) => reader.read(file), budget);
    } finally {
      reader.close();
    }
  },
  /** One chunk of the engine's stat/hash work (main/reconcile/floor/file-jobs.ts). */
  'file-job': (job: FileJob) => runFileJob(job),
  /**
   * A big spec's YAML parse and schema check (main/reconcile/specs/spec-loader.ts, loadSpecs). Loaded on
   * first use: the parser and schemas cost every worker ~15 MB, and hashing jobs never need them.
   */
  'spec-validate': async ({ relative, text }: { relative: string; text: string }) =>
    (await import('../reconcile/specs/spec-validate.ts')).validateSpecText(relative, text),
  /**
   * A decision added to a big spec and the result validated, before an accept writes anything
   * (main/reconcile/notarai07/decisions-spec-edit.ts), loaded on first use like the spec parser.
   */
  'decision-spec-edit': async ({
    specPath,
    text,
    decision,
  }: {
    specPath: string;
    text: string;
    decision: { date: string; choice: string; rationale: string };
  }) =>
    (await import('../reconcile/notarai07/decisions-spec-edit.ts')).editAndValidateSpec(
      specPath,
      text,
      decision,
    ),
  /**
   * A big NotarAI project config's bounded parse (main/reconcile/notarai07/notarai-configs.ts), loaded on
   * first use like the spec parser.
   */
  'config-parse': async ({ text, format }: { text: string; format: 'yaml' | 'json' }) =>
    (await import('../reconcile/specs/config-text.ts')).parseConfigText(text, format),
  /**
   * A hot journal beside a cache database played back (main/reconcile/floor/cache-database.ts): as many
   * page writes as the journal holds. Loaded on first use, like the spec parser.
   */
  'sqlite-replay-journal': async (file: string) =>
    (await import('../reconcile/floor/sqlite-file.ts')).replayJournal(file),
};

/** Typed arrays in a result are moved to the main thread, not copied. */
function transferables(value: unknown): Transferable[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.values(value)
    .filter((field): field is Uint8Array => field instanceof Uint8Array)
    .map((field) => field.buffer as ArrayBuffer);
}

const port = parentPort;
if (port === null) throw new Error('pool-worker.ts must run in a worker thread');

port.on('message', (request: PoolRequest) => {
  const handler = handlers[request.kind];
  Promise.resolve()
    .then(() => {
      if (!handler) throw new Error(`unknown job kind: ${request.kind}`);
      return handler(request.payload as never, { onReserve: request.onReserve === true });
    })
    .then(
      (value) =>
        port.postMessage(
          { id: request.id, ok: true, value } satisfies PoolReply,
          transferables(value),
        ),
      (error: unknown) =>
        port.postMessage({
          id: request.id,
          ok: false,
          message: error instanceof Error ? error.message : String(error),
        } satisfies PoolReply),
    );
});
// Tells the pool the worker started (its imports loaded).
port.postMessage({ ready: true });
