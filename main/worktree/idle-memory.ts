// Gives a worktree process's memory back to the system once its server goes quiet. After a burst
// of requests V8 keeps the pages its heap grew into (measured: 300 MB resident after 5,000 calls
// from 50 clients, with a 32 MB heap), and its own memory reducer does not always run when the
// process simply stops being called. So when the server has been quiet for a few seconds after
// any activity (and once after start), the process runs one full "last resort" collection, which
// also returns V8's pooled pages to the system (300 MB -> ~115 MB in that measurement). Costs a
// few tens of milliseconds of CPU while nothing else is happening. Needs `--expose-gc`, which
// both launchers pass; without it this does nothing.

/** The V8 `gc()` extension (present with `--expose-gc`). */
type ExposedGc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

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
    gc?: ExposedGc | undefined;
    /** Called after each reclaim (for tests and logs). */
    onReclaimed?: () => void;
  } = {},
): IdleMemoryReclaimer {
  const quietMs = options.quietMs ?? QUIET_BEFORE_RECLAIM_MS;
  const gc = 'gc' in options ? options.gc : (globalThis as { gc?: ExposedGc }).gc;
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
      gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      options.onReclaimed?.();
    }, delay);
    timer.unref();
  };

  const activity = (): void => {
    lastActivity = performance.now();
    if (gc !== undefined && !closed && timer === undefined) arm(quietMs);
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
