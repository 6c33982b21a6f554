// What `grove check` and `grove score` will surely need is started before their modules load
// (~20 ms of the run), so it runs beside the loading instead of after it. The dispatcher
// (main/headless/cli.ts) calls warmUpCommand first, then loads the command:
//
// - git's listing of the worktree (listWorktreeFileSets's two `git ls-files`, run-git.ts's
//   startGitAhead): the command's own listing takes their output.
// - the worker pool's threads, when the hash cache says they will get work. The commands stat
//   every governed file (notarai-inputs.ts, FileJobRunner.statAll): on the main thread up to
//   CLI_MAIN_THREAD_STAT_PATHS files (a pool worker costs ~100 ms of CPU to start, more than it
//   saves there), on the pool's threads beyond, and the files no stat row vouches for are hashed
//   on them. So the threads start when the cache is too big for the main thread's stat pass, when
//   its stat rows are missing for many files, or with --with-snapshot (which may hash every file).
//
// Anything unexpected (a bad flag, no worktree) starts nothing: the command itself reports it.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { statInsideRoot } from '../platform/confined-fs.ts';
import { workerPool } from '../platform/worker-pool.ts';
import { startListingAhead } from '../reconcile/floor/git-queries.ts';
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

/** Starts git's listing, and the worker pool's threads if `command` will hand them work. */
export function warmUpCommand(command: string, args: readonly string[]): void {
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
  // Now, not at a later turn of the event loop: the command's modules load without giving one.
  // The real path, as the command's own listing is asked for (standaloneParts, realWorktreeRoot).
  try {
    if (statSync(root).isDirectory()) startListingAhead(realpathSync.native(root));
  } catch {
    // no such directory: the command says so
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
