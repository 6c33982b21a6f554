// `grove check` and `grove score` stat every governed file (notarai-inputs.ts,
// FileJobRunner.statAll): on the main thread up to CLI_MAIN_THREAD_STAT_PATHS files (a pool
// worker costs ~100 ms of CPU to start, more than it saves there), on the worker pool's threads
// beyond, and the files no stat row vouches for are hashed on the workers. The dispatcher
// (main/headless/cli.ts) calls warmUpPool first, before it loads the command: when the worktree's
// hash cache says the workers will get work (a cache too big for the main thread's stat pass, one
// whose stat rows are missing for many files, or --with-snapshot, which may hash every file), the
// pool's workers start now, and their start overlaps loading the command, the specs and git's
// listing. Anything unexpected (a bad flag, no worktree) starts nothing: the command itself
// reports it.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { statInsideRoot } from '../platform/confined-fs.ts';
import { workerPool } from '../platform/worker-pool.ts';
import { CHECK_OPTIONS, SCORE_OPTIONS } from './command-options.ts';

/**
 * NotarAI's database size from which its rows likely pass FileJobRunner's MAIN_THREAD_MAX_PATHS
 * (1,000 paths, ~120 bytes of row each): below it nothing goes to the workers.
 */
export const WARM_UP_CACHE_BYTES = 64 * 1024;
/**
 * NotarAI's database size from which its rows likely pass CLI_MAIN_THREAD_STAT_PATHS (50,000
 * paths, file-job-runner.ts; not imported, this module loads before the engine): from it the stat
 * pass goes to the workers.
 */
export const WORKER_STAT_CACHE_BYTES = 50_000 * 120;

const NOTARAI_DB = '.notarai/.cache/notarai.db';
const STATS_DB = '.notarai/.cache/grove-stats.db';

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
  const size = (file: string) =>
    statInsideRoot(root, file).then(
      ({ stats }) => (stats.isFile() ? stats.size : 0),
      () => 0, // no such file
    );
  void Promise.all([size(NOTARAI_DB), size(STATS_DB)]).then(([rows, statRows]) => {
    // Without NotarAI's rows there is nothing to compare (nothing is stat'ed or hashed); with
    // Grove's stat rows for under about half of them, the others are hashed on the workers.
    if (rows < WARM_UP_CACHE_BYTES) return;
    if (rows >= WORKER_STAT_CACHE_BYTES || statRows < rows / 2) workerPool().prestart();
  });
}
