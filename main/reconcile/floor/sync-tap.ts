// A faster way for the live index's sync (live-index.ts) to know that every change made before a
// call has been seen, on Linux: one non-recursive Node `fs.watch` per directory @parcel/watcher
// watches (the same ignores), used only for the sync. libuv keeps one inotify descriptor per event
// loop and hands its events to JS in the kernel's order, synchronously; so when this tap sees the
// sync's cookie file appear, every earlier event of every directory it watches has been handed to
// it before, and to the live index with it (parcel's batches, held at least 50 ms by its C++
// debounce, bring the same paths again later: applying a path twice is correct and cheap).
//
// It vouches only when that reasoning holds, and says why not otherwise (the sync then waits for
// parcel's own report of the cookie, as before):
// - its walk (the start, or a directory that appeared, moved or was replaced) is not finished;
// - no parcel-reported cookie written since the watch set last changed has come back (a
//   "certification": it covers what happened in a directory before the tap watched it);
// - an fs.watch error, or a watch it could not add (ENOSPC: the inotify watch limit, EMFILE...):
//   it then closes every handle and stays out of the way until stopped;
// - possible queue overflow: libuv drops IN_Q_OVERFLOW silently (its event has no watch: "Stale
//   event, no watchers left"), so the tap counts the events handed to it since the certifying
//   cookie was written and stops vouching past half the kernel's queue
//   (/proc/sys/fs/inotify/max_queued_events): losing an event needs a full queue, every event of
//   which is handed over afterwards. A parcel cookie certifies again, resetting the count;
// - handles closed (a watched directory went away): their events still queued are dropped by
//   libuv uncounted, so no certification is taken until libuv has drained its queue since.
// A watched directory whose own watch reports it deleted or moved is watched anew, even if a
// directory with the same inode number is there now (ext4 reuses them; the old watch is dead).
// The live index answers from memory only while every directory is watched (watchesAll).
import type { FSWatcher } from 'node:fs';
import path from 'node:path';
import {
  directoryInode,
  inotifyMaxQueuedEvents,
  inotifyMaxUserWatches,
  listSubdirectories,
  watchDirectoryNames,
} from '../../platform/confined-fs.ts';

/** A tree to watch: `dir` and every directory below it, but those named in `ignore` (absolute). */
export interface TapTree {
  dir: string;
  ignore: readonly string[];
}

/** Where the tap stood when a cookie was written (see LiveIndex.sync). */
export interface TapMark {
  epoch: number;
  delivered: number;
}

/** Directories the tap watches at most; above, it stays out of the way (parcel's cookie). */
export const MAX_TAP_DIRECTORIES = 50_000;
/**
 * Nor more than this share of the user's inotify watches (max_user_watches, shared by all their
 * processes): parcel needs as many for the same directories, in every worktree, and the tap is
 * only a shortcut. 192,536 here: 12,033 directories.
 */
const WATCH_SHARE = 16;
/** The kernel's default queue length, used when /proc cannot be read. */
const DEFAULT_MAX_QUEUED_EVENTS = 16_384;

export interface SyncTapOptions {
  trees: readonly TapTree[];
  /** Paths (absolute) that moved, in the order inotify reported them. */
  onPaths: (paths: string[]) => void;
  /** True for a path whose event must be handed over at once (the sync's cookie). */
  isCookie: (absolute: string) => boolean;
  /**
   * Overrides MAX_TAP_DIRECTORIES and the share of max_user_watches (tests: the watch limit
   * reached, without exhausting it).
   */
  maxDirectories?: number;
}

interface Watched {
  watcher: FSWatcher;
  ino: number;
  /** The ignores of its tree (absolute). */
  ignore: ReadonlySet<string>;
}

export class SyncTap {
  readonly #options: SyncTapOptions;
  readonly #watched = new Map<string, Watched>();
  readonly #maxTrusted: number;
  readonly #maxDirectories: number;
  /** Moves whenever the set of watched directories changes (or may have to). */
  #epoch = 0;
  /** Events handed over since the start. */
  #delivered = 0;
  #walks = 0;
  /** Pending checks that libuv drained its queue after handles were closed (see #structure). */
  #staleRisk = 0;
  #certified: TapMark | undefined;
  #failed: string | undefined;
  #stopped = false;
  #buffer: string[] = [];
  #flush: NodeJS.Immediate | undefined;
  #ready: Promise<void> = Promise.resolve();
  /** Why the tap could not vouch, by reason (diagnostics and tests). */
  readonly refusals = new Map<string, number>();

  constructor(options: SyncTapOptions) {
    this.#options = options;
    this.#maxTrusted = Math.floor((inotifyMaxQueuedEvents() ?? DEFAULT_MAX_QUEUED_EVENTS) / 2);
    const userWatches = inotifyMaxUserWatches();
    this.#maxDirectories =
      options.maxDirectories ??
      Math.min(
        MAX_TAP_DIRECTORIES,
        userWatches === undefined ? Infinity : Math.floor(userWatches / WATCH_SHARE),
      );
  }

  /** Starts watching; `ready` settles once the first walk is done. */
  start(): void {
    this.#ready = Promise.all(
      this.#options.trees.map((tree) =>
        this.#walk(tree.dir, new Set(tree.ignore.map((ignored) => path.resolve(ignored)))),
      ),
    ).then(() => undefined);
  }

  /** Settles when every walk started so far is done (tests, benchmarks). */
  get ready(): Promise<void> {
    return this.#ready;
  }

  /** Directories watched now (diagnostics and tests). */
  get watchedCount(): number {
    return this.#watched.size;
  }

  /** Events handed to the tap since it started (diagnostics and tests). */
  get delivered(): number {
    return this.#delivered;
  }

  get failure(): string | undefined {
    return this.#failed;
  }

  /** True while every directory of its trees is watched: its walks done, no failure, running. */
  watchesAll(): boolean {
    return !this.#failed && !this.#stopped && this.#walks === 0;
  }

  /** Where the tap stands, for a cookie written now; undefined if such a cookie cannot certify. */
  mark(): TapMark | undefined {
    if (this.#failed || this.#stopped || this.#walks > 0 || this.#staleRisk > 0) return undefined;
    return { epoch: this.#epoch, delivered: this.#delivered };
  }

  /** Parcel reported a cookie written at `mark`: the tap saw every directory since. */
  certify(mark: TapMark): void {
    if (mark.epoch !== this.#epoch || this.#failed || this.#stopped) return;
    if (this.#certified?.epoch === mark.epoch && this.#certified.delivered >= mark.delivered)
      return;
    this.#certified = mark;
  }

  /**
   * Undefined when every change made before the cookie just handed over has been handed over
   * before it; else why not. Asked at that moment (from within onPaths).
   */
  refusal(): string | undefined {
    const reason = this.#refusal();
    if (reason !== undefined) this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
    return reason;
  }

  #refusal(): string | undefined {
    if (this.#stopped) return 'stopped';
    if (this.#failed) return 'failed';
    if (this.#walks > 0) return 'walking';
    if (this.#certified?.epoch !== this.#epoch) return 'not certified';
    if (this.#delivered - this.#certified.delivered > this.#maxTrusted) return 'many events';
    return undefined;
  }

  /** Closes every handle; idempotent. */
  stop(): void {
    this.#stopped = true;
    this.#closeAll();
    if (this.#flush) clearImmediate(this.#flush);
    this.#flush = undefined;
    this.#buffer = [];
  }

  #closeAll(): void {
    for (const { watcher } of this.#watched.values()) watcher.close();
    this.#watched.clear();
  }

  #fail(reason: string): void {
    if (this.#failed || this.#stopped) return;
    this.#failed = reason;
    this.#epoch++;
    this.#closeAll();
  }

  /** Watches `dir` and every directory below it (not followed through symbolic links). */
  async #walk(dir: string, ignore: ReadonlySet<string>): Promise<void> {
    this.#walks++;
    this.#epoch++;
    try {
      const queue = [dir];
      for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
        if (this.#stopped || this.#failed) return;
        if (!this.#watch(next, ignore)) continue;
        let listed;
        try {
          listed = await listSubdirectories(next);
        } catch (error) {
          this.#fail(`cannot list ${next}: ${code(error)}`);
          return;
        }
        if (!listed) continue; // removed meanwhile: its parent reports it
        if (listed.unnamed) {
          this.#fail(`a directory name that is not UTF-8 under ${next}`);
          return;
        }
        for (const child of listed.directories) {
          if (!ignore.has(child) && !this.#watched.has(child)) queue.push(child);
        }
      }
    } finally {
      this.#walks--;
    }
  }

  /** Watches one directory; false if it is not one (any more) or the tap failed. */
  #watch(dir: string, ignore: ReadonlySet<string>): boolean {
    if (this.#watched.has(dir)) return false;
    // Its inode first: a directory replaced after this is reported by its parent's watch.
    const ino = directoryInode(dir);
    if (ino === undefined) return false;
    const most = this.#maxDirectories;
    if (this.#watched.size >= most) {
      this.#fail(`over ${most} directories`);
      return false;
    }
    let watcher: FSWatcher;
    try {
      watcher = watchDirectoryNames(dir, (type, name) => this.#event(dir, ignore, type, name));
    } catch (error) {
      if (gone(error)) return false;
      this.#fail(`cannot watch ${dir}: ${code(error)}`); // ENOSPC: the inotify watch limit
      return false;
    }
    watcher.on('error', (error) => this.#fail(`watch error on ${dir}: ${code(error)}`));
    this.#watched.set(dir, { watcher, ino, ignore });
    this.#epoch++;
    return true;
  }

  #event(dir: string, ignore: ReadonlySet<string>, type: string, name: string | null): void {
    if (this.#stopped) return;
    this.#delivered++;
    const absolute = name === null ? dir : path.join(dir, name);
    // Only an ignored directory's own entry can be reported: nothing below it is watched.
    if (ignore.has(absolute)) return;
    if (type === 'rename') {
      if (absolute.includes('\ufffd')) this.#fail(`a name the tap cannot watch under ${dir}`);
      else this.#structure(absolute, ignore);
      // The directory itself was deleted or moved (libuv names a watch's own event by the
      // directory's base name): its watch may be dead although a directory with the same inode
      // number is there now (ext4 hands a freed inode to the next one made), so it is watched
      // anew. A child of the same name gets here too: watching again is only a cost.
      if (name === path.basename(dir)) this.#structure(dir, ignore, true);
    }
    this.#buffer.push(absolute);
    if (this.#options.isCookie(absolute)) {
      this.#handOver();
    } else {
      this.#flush ??= setImmediate(() => this.#handOver());
    }
  }

  #handOver(): void {
    if (this.#flush) clearImmediate(this.#flush);
    this.#flush = undefined;
    const paths = this.#buffer;
    this.#buffer = [];
    if (paths.length > 0 && !this.#stopped) this.#options.onPaths(paths);
  }

  /**
   * A name appeared, went or was replaced: keeps the watched directories in step. `self`: the
   * directory's own watch reported it gone, whatever its inode number is now.
   */
  #structure(absolute: string, ignore: ReadonlySet<string>, self = false): void {
    const ino = directoryInode(absolute);
    const known = this.#watched.get(absolute);
    if (known && ino === known.ino && !self) return;
    if (known) {
      const prefix = `${absolute}${path.sep}`;
      for (const [dir, watched] of this.#watched) {
        if (dir === absolute || dir.startsWith(prefix)) {
          watched.watcher.close();
          this.#watched.delete(dir);
        }
      }
      this.#epoch++;
      // Events of those watches still in libuv's queue are dropped uncounted: no certification
      // until it has been read to the end (within this poll phase, or the next).
      this.#staleRisk++;
      setImmediate(() => {
        this.#staleRisk--;
      });
    }
    if (ino !== undefined) {
      const walk = this.#walk(absolute, ignore);
      this.#ready = Promise.all([this.#ready, walk]).then(() => undefined);
    }
  }
}

function code(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
}

function gone(error: unknown): boolean {
  const c = code(error);
  return c === 'ENOENT' || c === 'ENOTDIR';
}
