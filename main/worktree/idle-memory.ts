// Gives a worktree process's memory back to the system once its server goes quiet. After a burst
// of requests V8 keeps the pages its heap grew into (measured: 300 MB resident after 5,000 calls
// from 50 clients, with a 32 MB heap), and its own memory reducer does not always run when the
// process simply stops being called. So when the server has been quiet for a few seconds after
// any activity (and once after start), the process runs one full "last resort" collection, which
// also returns V8's pooled pages to the system (300 MB -> ~115 MB in that measurement). Costs a
// few tens of milliseconds of CPU while nothing else is happening.
//
// The `gc()` function is obtained when first needed (v8.setFlagsFromString('--expose-gc'), then a
// fresh vm context has it), not by starting the process with `--expose-gc`: that flag keeps Node
// from using its start-up snapshot and cost every worktree process ~50-100 ms of start time.
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The V8 `gc()` extension. */
type ExposedGc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** V8's `gc()`, exposed on first call (see above). */
function exposedGc(): ExposedGc {
  const existing = (globalThis as { gc?: ExposedGc }).gc;
  if (existing) return existing;
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as ExposedGc;
}

/** How long the server must be quiet after activity before memory is reclaimed. */
export const QUIET_BEFORE_RECLAIM_MS = 5_000;

export interface IdleMemoryReclaimer {
  /** Something happened (a request): reclaim once the server has been quiet long enough. */
  activity(): void;
  close(): void;
}

export function createIdleMemoryReclaimer(
  options: {
    quietMs?: number;
    /** Default: V8's own, exposed on first use; undefined turns reclaiming off. */
    gc?: (() => ExposedGc) | undefined;
    /** Called after each reclaim (for tests and logs). */
    onReclaimed?: () => void;
  } = {},
): IdleMemoryReclaimer {
  const quietMs = options.quietMs ?? QUIET_BEFORE_RECLAIM_MS;
  const gcProvider = 'gc' in options ? options.gc : exposedGc;
  let gc: ExposedGc | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastActivity = performance.now();
  let closed = false;

  // One timer at a time, re-armed for the rest of the quiet period when activity came meanwhile:
  // a request only stamps the time.
  const arm = (delay: number): void => {
    timer = setTimeout(() => {
      const quietFor = performance.now() - lastActivity;
      if (quietFor < quietMs) {
        arm(quietMs - quietFor);
        return;
      }
      timer = undefined;
      gc ??= gcProvider?.();
      gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      options.onReclaimed?.();
    }, delay);
    timer.unref();
  };

  const activity = (): void => {
    lastActivity = performance.now();
    if (gcProvider !== undefined && !closed && timer === undefined) arm(quietMs);
  };

  activity(); // start-up garbage (module loading, the first reconciliation state)
  return {
    activity,
    close: () => {
      closed = true;
      clearTimeout(timer);
    },
  };
}
