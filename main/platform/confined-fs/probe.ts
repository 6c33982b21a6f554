// Health of the file layer: a probe the host's supervisor reads through the worktree process.
import { lstat } from 'node:fs/promises';

/**
 * A probe of the file layer for the host's health check: every `everyMs` it lstats the root
 * through libuv's thread pool (where every asynchronous file call of the tools waits its turn) and
 * reports how long the probe has been pending. A process whose event loop answers pings while its
 * file calls never complete (the pool exhausted by calls stuck in the kernel) shows here.
 */
export function createFileLayerProbe(
  root: string,
  everyMs = 2_000,
): { pendingMs(): number; close(): void } {
  let pendingSince: number | undefined;
  const timer = setInterval(() => {
    if (pendingSince !== undefined) return;
    pendingSince = Date.now();
    lstat(root).then(
      () => (pendingSince = undefined),
      () => (pendingSince = undefined), // an answer, even an error, means the layer runs
    );
  }, everyMs);
  timer.unref();
  return {
    pendingMs: () => (pendingSince === undefined ? 0 : Date.now() - pendingSince),
    close: () => clearInterval(timer),
  };
}
