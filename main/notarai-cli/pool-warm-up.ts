// `grove check` and `grove score` stat every governed file on the worker pool's threads
// (notarai-inputs.ts, FileJobRunner.statAll); each thread takes ~40 ms to start. The dispatcher
// (main/headless/cli.ts) calls warmUpPool first, before it loads the command: when the worktree's
// hash cache is big enough for the stat pass to go to the workers (or --with-snapshot may hash
// every file), the pool's workers start now, and their start overlaps loading the command, the
// specs and git's listing. Anything unexpected (a bad flag, no worktree) starts nothing: the
// command itself reports it.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { statInsideRoot } from '../platform/confined-fs.ts';
import { workerPool } from '../platform/worker-pool.ts';
import { CHECK_OPTIONS, SCORE_OPTIONS } from './command-options.ts';

/**
 * NotarAI's database size from which its rows likely pass FileJobRunner's MAIN_THREAD_MAX_PATHS
 * (1,000 paths, ~100 bytes of row each): below it the stat pass runs on the main thread.
 */
export const WARM_UP_CACHE_BYTES = 64 * 1024;

const NOTARAI_DB = '.notarai/.cache/notarai.db';

/** Starts the worker pool's threads if `command` with `args` will hand them work. */
export function warmUpPool(command: string, args: readonly string[]): void {
  if (command !== 'check' && command !== 'score') return;
  let root: string;
  let withSnapshot: boolean;
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: command === 'check' ? CHECK_OPTIONS : SCORE_OPTIONS,
    });
    if (positionals.length > 1) return;
    root = path.resolve(positionals[0] ?? '.');
    withSnapshot = values['with-snapshot'];
  } catch {
    return;
  }
  if (withSnapshot) {
    workerPool().prestart();
    return;
  }
  statInsideRoot(root, NOTARAI_DB).then(
    ({ stats }) => {
      if (stats.isFile() && stats.size >= WARM_UP_CACHE_BYTES) workerPool().prestart();
    },
    () => undefined, // no cache: nothing to stat
  );
}
