// Test support for the live index and its sync tap (main/reconcile/floor/): a real engine and
// watcher on a temp repository, with or without the tap walked, the answers a call gets from it and from a fresh engine
// with no index, and the inotify watches this process holds.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ReconcileEngine } from '../reconcile/reconcile-engine.ts';
import { ReconcileWatcher } from '../reconcile/reconcile-watcher.ts';
import type { TempRepo } from './temp-repo.ts';

/** The files (beside a spec) every sync-tap test starts from: two levels of directories. */
export const TAP_FILES = {
  'src/a.ts': 'alpha\n',
  'src/b.ts': 'bravo\n',
  'src/sub/c.ts': 'charlie\n',
  'src/sub/deep/d.ts': 'delta\n',
  'lib/e.ts': 'echo\n',
};

/**
 * Starts an engine and its watcher on `repo` (cleanups pushed to `cleanups`), without the sync
 * tap: a worktree process before its first client.
 */
export async function watchedEngine(repo: TempRepo, cleanups: (() => unknown)[]) {
  const engine = new ReconcileEngine({ root: repo.root });
  cleanups.push(() => engine.close());
  const watcher = new ReconcileWatcher({ engine, base: 'main', onState: () => undefined });
  cleanups.push(() => watcher.close());
  await watcher.start();
  return { engine, watcher, index: watcher.liveIndex };
}

/**
 * Starts an engine and its watcher on `repo` (cleanups pushed to `cleanups`) and waits for the
 * tap's first walk; `markFirst` is marked reconciled before it returns.
 */
export async function watchedWithTap(
  repo: TempRepo,
  cleanups: (() => unknown)[],
  options: { tapMaxDirectories?: number; markFirst?: string[] } = {},
) {
  // The cache directory the cookies go to (NotarAI's; Grove never creates it for a sync).
  await mkdir(path.join(repo.root, '.notarai/.cache'), { recursive: true });
  const engine = new ReconcileEngine({ root: repo.root });
  cleanups.push(() => engine.close());
  const watcher = new ReconcileWatcher({
    engine,
    base: 'main',
    onState: () => undefined,
    ...(options.tapMaxDirectories === undefined
      ? {}
      : { tapMaxDirectories: options.tapMaxDirectories }),
  });
  cleanups.push(() => watcher.close());
  watcher.startSyncTap(); // as a worktree process does when its first client comes
  await watcher.start();
  const tap = watcher.syncTap;
  if (!tap) throw new Error('no sync tap (Linux only)');
  await tap.ready;
  if (options.markFirst) await engine.markReconciled(options.markFirst);
  return { engine, watcher, index: watcher.liveIndex, tap };
}

/** What a fresh engine, with no index, answers now. */
export async function scannedAnswers(root: string) {
  const engine = new ReconcileEngine({ root });
  try {
    return { check: await engine.check({}), score: await engine.driftScore({}) };
  } finally {
    engine.close();
  }
}

/** The watched engine's answers (each syncs first). */
export async function liveAnswers(engine: ReconcileEngine) {
  return { check: await engine.check({}), score: await engine.driftScore({}) };
}

/** inotify descriptors of a process (default this one) and the watches on them, from /proc. */
export function inotifyOf(pid: number | 'self' = 'self'): { instances: number; watches: number } {
  let instances = 0;
  let watches = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    if (target !== 'anon_inode:inotify') continue;
    instances++;
    const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
    watches += info.split('\n').filter((line) => line.startsWith('inotify wd:')).length;
  }
  return { instances, watches };
}

/** inotify watches this process holds, on every inotify descriptor. */
export const inotifyWatches = (): number => inotifyOf().watches;
