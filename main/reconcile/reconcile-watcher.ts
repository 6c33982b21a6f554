// Keeps one worktree's ReconcileState current: watches the worktree (and git's refs, HEAD and
// index) with @parcel/watcher, recomputes the state (debounced, one computation at a time) when
// anything in the worktree moves (any file can be a coverage gap), from the live index, which
// applies each event to what it knows (live-index.ts), and reports spec files added, changed or removed so the
// MCP servers can send resources/updated and resources/list_changed. node_modules and .git
// churn are not watched through the worktree; in git's directory only HEAD, the index and refs
// matter. If watching is impossible (inotify limits...), it falls back to polling. The backend is
// pinned per platform (watcherBackend): the automatic choice probes for watchman through a shell it
// never reaps, one zombie `sh` per probe. On Linux a second watch of the same directories (the
// sync's tap, sync-tap.ts) lets the live index's syncs answer without waiting for parcel's batch.
import path from 'node:path';
import watcher from '@parcel/watcher';
import type { AsyncSubscription, BackendType, Event } from '@parcel/watcher';
import type { ReconcileState } from '../../shared/reconcile.ts';
import { stageMark } from '../platform/stage-timings.ts';
import { CACHE_DB } from './floor/hash-cache.ts';
import { isCookiePath, LiveIndex } from './floor/live-index.ts';
import type { ReconcileEngine } from './reconcile-engine.ts';
import { isSpecPath, NOTARAI_DIR } from './specs/spec-loader.ts';
import { SyncTap, type TapTree } from './floor/sync-tap.ts';

/** Directory names never watched inside the worktree. */
const IGNORED_DIRS = ['.git', 'node_modules'];
/**
 * In git's common directory, what is not HEAD, index, refs or info/ (info/exclude changes which
 * untracked files git lists, which the live index must hear about).
 */
const IGNORED_GIT = ['objects', 'logs', 'lfs', 'hooks', 'modules', 'rr-cache'];
/**
 * How long the window's recomputation waits for more events: enough to take a burst (a save
 * that writes a temp file and renames it) in one go; each event is applied to the live index
 * for its path only, so the recomputation after it costs little (docs/performance.md).
 */
export const DEFAULT_DEBOUNCE_MS = 100;
/**
 * Longest a recomputation waits for clients' calls that start while it waits: the window's state
 * is background work, and beside a running call it would take turns of the event loop and the
 * pool's workers from it. The calls running when it came due are always waited for
 * (ReconcileEngine.whenNoCallsRunning).
 */
export const CALLS_FIRST_MAX_WAIT_MS = 1_000;
export const POLL_INTERVAL_MS = 15_000;

/**
 * The platform's own backend for @parcel/watcher. Left to choose, the watcher first looks for
 * watchman with popen("watchman ... get-sockname") and, when watchman is absent, throws before
 * pclose: the shell stays a zombie child of the worktree process, one per subscribe that creates
 * the backend (every start, and every re-subscribe after all subscriptions ended). Grove never
 * uses watchman. Elsewhere (the BSDs) the automatic choice stays.
 */
export function watcherBackend(
  platform: NodeJS.Platform = process.platform,
): BackendType | undefined {
  switch (platform) {
    case 'linux':
      return 'inotify';
    case 'darwin':
      return 'fs-events';
    case 'win32':
      return 'windows';
    default:
      return undefined;
  }
}

export interface SpecChanges {
  /** Spec files (POSIX, relative) whose content changed. */
  updated: string[];
  added: string[];
  removed: string[];
}

export interface ReconcileWatcherOptions {
  engine: ReconcileEngine;
  base: string;
  debounceMs?: number;
  /** Overrides CALLS_FIRST_MAX_WAIT_MS (tests). */
  callsFirstMaxWaitMs?: number;
  onState: (state: ReconcileState) => void;
  onSpecsChanged?: (changes: SpecChanges) => void;
  onError?: (error: Error) => void;
  /** Overrides the sync tap's MAX_TAP_DIRECTORIES (tests). */
  tapMaxDirectories?: number;
}

export class ReconcileWatcher {
  readonly #options: ReconcileWatcherOptions;
  readonly #root: string;
  #base: string;
  #subscriptions: AsyncSubscription[] = [];
  /** Answers the live index's syncs before parcel's batch (Linux; sync-tap.ts). */
  #tap: SyncTap | undefined;
  /** What the tap would watch (parcel's subscriptions), once start() subscribed. */
  #tapTrees: TapTree[] | undefined;
  /** startSyncTap() was called: start the tap as soon as the trees are known. */
  #tapWanted = false;
  #poller: NodeJS.Timeout | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #dirty = false;
  #closed = false;
  #pendingSpecs: SpecChanges = { updated: [], added: [], removed: [] };
  #last: ReconcileState | undefined;
  /** git's directories: any event there (HEAD, index, refs) can move the changed set. */
  #gitDirs: string[] = [];
  /** What the events vouch for between tool calls; the engine answers warm calls from it. */
  readonly #index: LiveIndex;

  constructor(options: ReconcileWatcherOptions) {
    this.#options = options;
    this.#root = options.engine.root;
    this.#base = options.base;
    this.#index = new LiveIndex(this.#root);
    options.engine.attachLiveIndex(this.#index);
  }

  get base(): string {
    return this.#base;
  }

  /** What the events vouch for (diagnostics and tests: how snapshots were kept or dropped). */
  get liveIndex(): LiveIndex {
    return this.#index;
  }

  /** The sync's tap, if any (tests and benchmarks). */
  get syncTap(): SyncTap | undefined {
    return this.#tap;
  }

  /** The last state computed, if any. */
  get state(): ReconcileState | undefined {
    return this.#last;
  }

  /** Computes the first state and starts watching. */
  async start(): Promise<void> {
    try {
      const { gitDir, commonDir } = await this.#options.engine.gitDirectories();
      this.#gitDirs = [gitDir, commonDir];
      const onEvents = (error: Error | null, events: Event[]): void => {
        if (error) {
          // Events may have been lost (an overflow): the index can no longer vouch.
          this.#index.distrust();
          this.#report(error);
        } else {
          this.#index.noteEvents(events.map((event) => event.path));
          this.#handle(events);
        }
      };
      const backend = watcherBackend();
      const subscribe = async (directory: string, ignore: string[]) => {
        const subscription = await watcher.subscribe(directory, onEvents, { ignore, backend });
        // Closed meanwhile: close() could not see this one.
        if (this.#closed) {
          await subscription.unsubscribe().catch(() => undefined);
          throw new Error('closed while starting');
        }
        return subscription;
      };
      this.#subscriptions.push(
        await subscribe(this.#root, IGNORED_DIRS),
        await subscribe(commonDir, IGNORED_GIT),
      );
      const trees: TapTree[] = [
        { dir: this.#root, ignore: IGNORED_DIRS.map((name) => path.join(this.#root, name)) },
        { dir: commonDir, ignore: IGNORED_GIT.map((name) => path.join(commonDir, name)) },
      ];
      if (!isInside(commonDir, gitDir)) {
        this.#subscriptions.push(await subscribe(gitDir, IGNORED_GIT));
        trees.push({ dir: gitDir, ignore: IGNORED_GIT.map((name) => path.join(gitDir, name)) });
      }
      this.#index.trust();
      this.#tapTrees = trees;
      if (this.#tapWanted) this.startSyncTap();
    } catch (error) {
      this.#index.distrust();
      if (this.#closed) return;
      this.#report(
        new Error(
          `cannot watch ${this.#root} (${error instanceof Error ? error.message : String(error)}); ` +
            `polling every ${POLL_INTERVAL_MS / 1000} s instead`,
        ),
      );
      this.#poller = setInterval(() => this.refresh(), POLL_INTERVAL_MS);
      this.#poller.unref();
    }
    await this.#compute();
  }

  /**
   * Starts the sync's tap once a client has come (the worktree process's first MCP request): only
   * a client's calls sync, and a process no client called keeps its idle memory (the tap's watches
   * and walk cost ~4 MB a process in a 20-worktree host; docs/performance.md). Called before
   * start() has subscribed, the tap starts as soon as it has. Linux only; GROVE_SYNC_TAP=0 turns
   * it off (A/B benchmarks; a way out if it ever misbehaves). Until it vouches, syncs wait for
   * parcel's batch as before.
   */
  startSyncTap(): void {
    this.#tapWanted = true;
    if (!this.#tapTrees || this.#tap || this.#closed) return;
    if (process.platform !== 'linux' || process.env.GROVE_SYNC_TAP === '0') return;
    this.#startTap(this.#tapTrees);
  }

  /**
   * The same directories as parcel's subscriptions, watched by one fs.watch each: syncs that the
   * tap can vouch for answer without waiting for parcel's batch (sync-tap.ts).
   */
  #startTap(trees: TapTree[]): void {
    const root = this.#root;
    const tap = new SyncTap({
      trees,
      onPaths: (paths) => this.#index.noteEvents(paths, 'tap'),
      isCookie: (absolute) => isCookiePath(root, absolute),
      ...(this.#options.tapMaxDirectories !== undefined
        ? { maxDirectories: this.#options.tapMaxDirectories }
        : {}),
    });
    this.#tap = tap;
    this.#index.attachTap(tap);
    tap.start();
  }

  /** Changes the base the `affected` figures compare against, and recomputes. */
  setBase(base: string): void {
    this.#base = base;
    this.refresh();
  }

  /** Recomputes soon (after the debounce). */
  refresh(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => void this.#compute(),
      this.#options.debounceMs ?? DEFAULT_DEBOUNCE_MS,
    );
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#index.distrust();
    this.#index.attachTap(undefined);
    this.#tap?.stop();
    clearTimeout(this.#timer);
    clearInterval(this.#poller);
    const subscriptions = this.#subscriptions;
    this.#subscriptions = [];
    await Promise.allSettled(subscriptions.map((subscription) => subscription.unsubscribe()));
    await this.#running?.catch(() => undefined);
  }

  #handle(events: Event[]): void {
    let relevant = false;
    for (const event of events) {
      if (this.#gitDirs.some((directory) => isInside(directory, event.path))) {
        relevant = true; // HEAD, the index or a ref moved
        continue;
      }
      const relative = path.relative(this.#root, event.path).split(path.sep).join('/');
      if (relative === '..' || relative.startsWith('../') || path.isAbsolute(relative)) continue;
      if (isSpecPath(relative)) {
        relevant = true;
        const list =
          event.type === 'create'
            ? this.#pendingSpecs.added
            : event.type === 'delete'
              ? this.#pendingSpecs.removed
              : this.#pendingSpecs.updated;
        if (!list.includes(relative)) list.push(relative);
        continue;
      }
      if (relative === CACHE_DB)
        relevant = true; // reconciled, or the cache cleared
      else if (relative.startsWith(`${NOTARAI_DIR}/.cache/`)) continue;
      else relevant = true; // any file: governed, a coverage gap, or a config of check and score
    }
    if (relevant) this.refresh();
  }

  async #compute(): Promise<void> {
    if (this.#closed) return;
    if (this.#running) {
      this.#dirty = true;
      return;
    }
    this.#running = (async () => {
      do {
        await this.#options.engine.whenNoCallsRunning(
          this.#options.callsFirstMaxWaitMs ?? CALLS_FIRST_MAX_WAIT_MS,
        );
        if (this.#closed) return;
        this.#dirty = false;
        const specChanges = this.#pendingSpecs;
        this.#pendingSpecs = { updated: [], added: [], removed: [] };
        stageMark('state-recompute-started'); // GROVE_STAGE_TIMINGS only (benchmarks)
        try {
          const state = await this.#options.engine.computeState(this.#base);
          if (this.#closed) return;
          this.#last = state;
          stageMark('state-recompute-done');
          this.#options.onState(state);
        } catch (error) {
          this.#report(error);
        }
        const changed =
          specChanges.updated.length + specChanges.added.length + specChanges.removed.length;
        if (changed > 0) {
          try {
            this.#options.onSpecsChanged?.(specChanges);
          } catch (error) {
            this.#report(error);
          }
        }
      } while (this.#dirty && !this.#closed);
    })();
    try {
      await this.#running;
    } finally {
      this.#running = undefined;
    }
  }

  #report(error: unknown): void {
    this.#options.onError?.(error instanceof Error ? error : new Error(String(error)));
  }
}

function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
