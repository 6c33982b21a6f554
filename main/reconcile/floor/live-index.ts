// What the watcher can vouch for between two calls: the results of the last scan — git's listing
// of the worktree, the changed set vs each base, the specs, the files each spec governs and the
// content hash of every file the scan hashed or found unchanged by the stat fast path — kept
// current as events arrive, so a call answers from memory instead of listing, stat'ing and
// hashing 20,000 files again.
//
// Correctness first. A file or spec created, edited or deleted is applied for that path only
// (live-index-update.ts): the listing, the governed sets and the hashes change for it, a spec is
// parsed again and matched again. Anything the index cannot vouch for ends the snapshot, and the
// next call does a full scan: an event in git's directories (HEAD, the index, refs, info/exclude:
// a commit, a checkout, a branch switch, `git add`), a .gitignore or .gitattributes, a directory,
// too many paths at once, an overflow of the watcher's queue (it then stops trusting), anything
// live-index-update.ts refuses. Only Grove's and NotarAI's own cache files (.notarai/.cache/) are
// not events here: they hold no worktree content. Events reach us a little after the fact, so a
// call first syncs: it creates a cookie file in the cache directory and waits for it to be
// reported; inotify keeps one queue in order, so every change made before the call has been
// reported by then, and is applied before the call reads the snapshot. Two reporters: on Linux the
// sync's tap (sync-tap.ts: one fs.watch per directory, libuv's single inotify queue, handed over at
// once) when it can vouch, else parcel's batch (held at least 50 ms by its debounce), whose report
// of a cookie also certifies the tap. A path both report is applied twice: each application reads
// the path as it is then. When the watcher cannot vouch (it is not subscribed, it fell back to
// polling, an error, the cookie does not come back in time) there is no snapshot and every call
// scans.
import path from 'node:path';
import {
  entryKindInsideRoot,
  removeFileInsideRoot,
  writeFileAtomicInsideRoot,
} from '../../platform/confined-fs.ts';
import { forEachInSlices } from '../../platform/time-slices.ts';
import { listWorktreeFileSets, type WorktreeFiles } from './git-queries.ts';
import {
  applyPathChanges,
  linkedFallback,
  MAX_INCREMENTAL_PATHS,
  type ScanSnapshot,
} from './live-index-update.ts';
import { loadSpecs, type SpecSet, type SpecValidationMemo } from '../specs/spec-loader.ts';
import type { TapMark } from './sync-tap.ts';

/** Where cookies are written: the cache directory, which holds no worktree content. */
export const COOKIE_DIR = '.notarai/.cache';
const COOKIE_PREFIX = '.grove-sync-';
/** Paths of applied batches kept for movedSince (older batches are forgotten). */
const MAX_LOGGED_PATHS = 10_000;
/** Longest a call waits for its cookie before it scans instead. */
export const SYNC_TIMEOUT_MS = 1_000;

export type { ScanSnapshot } from './live-index-update.ts';

/** Who reported an event: parcel's watcher, or the sync's tap (sync-tap.ts). */
export type EventSource = 'watcher' | 'tap';

/** What sync() asks of the tap (sync-tap.ts's SyncTap). */
export interface SyncVouch {
  mark(): TapMark | undefined;
  certify(mark: TapMark): void;
  refusal(): string | undefined;
  /** True while it watches every directory of its trees: its walks done, no failure. */
  watchesAll(): boolean;
}

/** True for the absolute path of a sync cookie in `root`. */
export function isCookiePath(root: string, absolute: string): boolean {
  return (
    path.dirname(absolute) === path.join(root, COOKIE_DIR) &&
    path.basename(absolute).startsWith(COOKIE_PREFIX)
  );
}

export class LiveIndex {
  readonly #root: string;
  /** Counts events since the watcher subscribed; a snapshot is valid while it has not moved. */
  #sequence = 0;
  #trusted = false;
  #snapshot: (ScanSnapshot & { sequence: number }) | undefined;
  #cookieCount = 0;
  readonly #cookies = new Map<string, (source: EventSource) => void>();
  #tap: SyncVouch | undefined;
  /** Paths (POSIX, relative) that moved since the snapshot's sequence, still to be applied. */
  readonly #pending = new Set<string>();
  #applying: Promise<void> | undefined;
  /** How the snapshots were kept since the watcher subscribed (diagnostics and tests). */
  readonly counts = { applied: 0, dropped: 0 };
  /** How syncs learned their cookie came back: through the tap, or parcel's batch (tests). */
  readonly syncs = { tap: 0, watcher: 0 };
  /** Why the last snapshots were dropped (the latest last; diagnostics and tests). */
  readonly dropReasons: string[] = [];
  /**
   * Counts the batches of paths applied to the snapshot, and every new snapshot or drop: what a
   * memo of per-path answers (classification-memo.ts) records its answers under, to ask later
   * which paths moved since (movedSince) instead of answering for every path again.
   */
  #generation = 0;
  /** The batches applied since #movesFrom, oldest first (bounded: MAX_LOGGED_PATHS). */
  #moves: { generation: number; paths: readonly string[] }[] = [];
  #movesLogged = 0;
  /** The first generation whose moves are logged: earlier ones cannot be answered. */
  #movesFrom = 0;

  constructor(root: string) {
    this.#root = root;
  }

  /**
   * The tap that may answer syncs before parcel's batch (sync-tap.ts), or none. Once one is
   * attached, the index vouches only while it watches every directory: parcel's inotify backend
   * does not list a directory made or moved in (it watches that one alone, and misses a
   * subdirectory made before its watch was added), and keeps reporting a directory moved within
   * the tree under its old path; the tap's walks watch each directory under its path, and report
   * what moves there. While it walks, or once it has failed, every call scans.
   */
  attachTap(tap: SyncVouch | undefined): void {
    this.#tap = tap;
  }

  /** The watcher can vouch, and the tap (if any) watches every directory. */
  #vouches(): boolean {
    return this.#trusted && (this.#tap === undefined || this.#tap.watchesAll());
  }

  /** The watcher is subscribed: events from now on are seen. */
  trust(): void {
    this.#trusted = true;
    this.#sequence++;
    this.#drop('the watcher subscribed again');
  }

  /** The watcher can no longer vouch (an error, polling): no snapshot until it trusts again. */
  distrust(): void {
    this.#trusted = false;
    this.#drop('the watcher cannot vouch');
  }

  /**
   * A scan found `file` with more than one name (a hard link): a write through another name sends
   * no event for it, so no snapshot may hold it. Counts as a move, so the scan under way (and any
   * begun before) records nothing either.
   */
  refuseLinked(file: string): void {
    this.#sequence++;
    this.#drop(linkedFallback(file));
  }

  #drop(reason: string): void {
    if (this.#snapshot) {
      this.counts.dropped++;
      this.dropReasons.push(reason);
      if (this.dropReasons.length > 20) this.dropReasons.shift();
    }
    this.#snapshot = undefined;
    this.#pending.clear();
    this.#newLineage();
  }

  /** A new snapshot or none: no earlier generation's answers can be carried over. */
  #newLineage(): void {
    this.#generation++;
    this.#moves = [];
    this.#movesLogged = 0;
    this.#movesFrom = this.#generation;
  }

  /** Where the applied moves stand now (see movedSince). */
  get generation(): number {
    return this.#generation;
  }

  /**
   * The paths applied to the snapshot since `generation` (a value of `generation` read while the
   * snapshot vouched), in no order and possibly repeated; undefined when that is not known (the
   * snapshot was dropped or replaced since, or the log was cut): then every path may have moved.
   */
  movedSince(generation: number): string[] | undefined {
    if (generation < this.#movesFrom || generation > this.#generation) return undefined;
    const moved: string[] = [];
    for (const batch of this.#moves) if (batch.generation > generation) moved.push(...batch.paths);
    return moved;
  }

  /**
   * Events the watcher (or the tap) reported: absolute paths, in the worktree or in git's
   * directories. A path reported twice (by the tap, then in parcel's batch) is applied twice:
   * each application reads the path's state as it is then.
   */
  noteEvents(paths: readonly string[], source: EventSource = 'watcher'): void {
    let moved = false;
    let unvouched: string | undefined;
    const files: string[] = [];
    for (const absolute of paths) {
      const relative = path.relative(this.#root, absolute).split(path.sep).join('/');
      const cookie = path.posix.basename(relative);
      if (relative.startsWith(`${COOKIE_DIR}/`) || relative === COOKIE_DIR) {
        this.#cookies.get(cookie)?.(source);
        continue; // the caches: not worktree content
      }
      moved = true;
      if (
        relative === '' ||
        relative === '..' ||
        relative.startsWith('../') ||
        path.isAbsolute(relative) ||
        relative === '.git' ||
        relative.startsWith('.git/') ||
        cookie === '.gitignore' ||
        cookie === '.gitattributes'
      ) {
        unvouched ??= relative; // git's directories (HEAD, index, refs), or what changes git's view
      } else {
        files.push(relative);
      }
    }
    if (!moved) return;
    this.#sequence++;
    if (unvouched !== undefined || !this.#snapshot) {
      this.#drop(`an event the index cannot apply: ${unvouched ?? ''}`);
      return;
    }
    for (const file of files) this.#pending.add(file);
    // Applied at once, in the background (a new file costs a `git check-ignore`): the next
    // reader, usually the window's recomputation after its debounce, finds it done.
    if (this.#pending.size > MAX_INCREMENTAL_PATHS)
      this.#drop(`over ${MAX_INCREMENTAL_PATHS} paths`);
    else void this.#settle().catch(() => undefined);
  }

  /**
   * Applies the paths that moved to the snapshot (live-index-update.ts), until none is left or it
   * had to be dropped. Events arriving meanwhile are applied in a further round.
   */
  async #settle(): Promise<void> {
    while (this.#trusted && this.#snapshot && this.#pending.size > 0) {
      this.#applying ??= this.#applyPending().finally(() => {
        this.#applying = undefined;
      });
      await this.#applying;
    }
  }

  async #applyPending(): Promise<void> {
    const base = this.#snapshot;
    if (!base) return;
    const paths = [...this.#pending];
    this.#pending.clear();
    const sequence = this.#sequence;
    let next: ScanSnapshot | { fallback: string };
    try {
      next = await applyPathChanges(this.#root, base, paths);
    } catch (error) {
      next = { fallback: error instanceof Error ? error.message : String(error) };
    }
    // A full scan recorded meanwhile, or the snapshot was dropped: that one stands.
    if (this.#snapshot !== base) return;
    if ('fallback' in next) {
      this.#drop(next.fallback);
      return;
    }
    this.counts.applied++;
    this.#snapshot = { ...next, sequence };
    this.#generation++;
    this.#moves.push({ generation: this.#generation, paths });
    this.#movesLogged += paths.length;
    while (this.#movesLogged > MAX_LOGGED_PATHS && this.#moves.length > 0) {
      const oldest = this.#moves.shift()!;
      this.#movesLogged -= oldest.paths.length;
      this.#movesFrom = oldest.generation;
    }
  }

  /**
   * Where events stand once those already reported are applied: what a scan starting now records
   * its results under (undefined when the watcher cannot vouch).
   */
  async settled(): Promise<number | undefined> {
    await this.#settle();
    return this.current();
  }

  /**
   * Waits until every change made before this call has been reported. Resolves to the sequence a
   * scan starting now must record, or undefined when the watcher cannot vouch.
   */
  async sync(): Promise<number | undefined> {
    if (!this.#vouches()) return undefined;
    const name = `${COOKIE_PREFIX}${process.pid}-${++this.#cookieCount}`;
    const relative = `${COOKIE_DIR}/${name}`;
    let timer: NodeJS.Timeout | undefined;
    // Where the tap stands as the cookie is written: parcel's report of it certifies the tap.
    const tap = this.#tap;
    const mark = tap?.mark();
    const seen = new Promise<boolean>((resolve) => {
      let answered = false;
      this.#cookies.set(name, (source) => {
        if (source === 'watcher') {
          if (mark) tap?.certify(mark);
          if (answered) return;
          answered = true;
          this.syncs.watcher++;
          resolve(true);
        } else if (!answered && tap && tap.refusal() === undefined) {
          answered = true;
          // Handed over by the tap after every event before it: no need to wait for parcel.
          this.syncs.tap++;
          resolve(true);
        }
      });
      // The timer can fire in the same turn as the cookie's event when the main thread was busy
      // (a big snapshot worked out meanwhile): the event is handled in that turn's poll phase,
      // so the timeout only gives up after it, in the check phase.
      timer = setTimeout(() => setImmediate(() => resolve(false)), SYNC_TIMEOUT_MS);
    });
    try {
      // Only where the cache already is: Grove creates .notarai/.cache exactly when NotarAI would.
      if (entryKindInsideRoot(this.#root, COOKIE_DIR) !== 'directory') return undefined;
      await writeFileAtomicInsideRoot(this.#root, relative, '');
      if (!(await seen)) return undefined;
      await this.#settle();
      return this.#vouches() ? this.#sequence : undefined;
    } catch {
      return undefined; // a cache directory Grove cannot write: scan
    } finally {
      clearTimeout(timer);
      this.#cookies.delete(name);
      try {
        removeFileInsideRoot(this.#root, relative);
      } catch {
        // gone already
      }
    }
  }

  /** Where events stand now: what a scan starting now records its results under. */
  current(): number | undefined {
    return this.#vouches() ? this.#sequence : undefined;
  }

  /** True when a snapshot could answer (worth a sync), once the paths that moved are applied. */
  get hasSnapshot(): boolean {
    return this.#vouches() && this.#snapshot !== undefined;
  }

  /** The snapshot of the last scan, if nothing moved since `sequence` (from sync()). */
  snapshot(sequence: number | undefined): ScanSnapshot | undefined {
    if (sequence === undefined || this.#snapshot?.sequence !== sequence) return undefined;
    if (!this.#vouches()) return undefined;
    return sequence === this.#sequence ? this.#snapshot : undefined;
  }

  /**
   * Adds to the snapshot the results of a scan that began at `sequence` (current() or sync()):
   * kept only if nothing moved since then. A scan need not sync to record: a change it missed
   * is reported later and ends the snapshot then.
   */
  record(sequence: number | undefined, update: (snapshot: ScanSnapshot) => void): void {
    if (sequence === undefined || sequence !== this.#sequence || !this.#vouches()) return;
    const before = this.#snapshot?.listing;
    if (this.#snapshot?.sequence !== sequence) {
      // A scan that began after every event so far: it saw what is still pending.
      this.#pending.clear();
      this.#newLineage();
      this.#snapshot = {
        sequence,
        bases: new Map(),
        changed: new Map(),
        hashes: new Map(),
        read: new Map(),
        governed: new Map(),
      };
    }
    update(this.#snapshot);
    const listing = this.#snapshot.listing;
    if (listing && listing !== before && !isWatched(listing))
      this.#drop('git lists unwatched files');
  }

  /**
   * Adds content hashes to the snapshot recorded at `sequence`, if it is still the snapshot (see
   * record; hashes alone never start one). `read`: those the scan read from the files' bytes.
   * `only`: keeps only these paths. Merged in slices (100,000 hashes): once an event came
   * meanwhile, the rest is left out.
   */
  async recordHashes(
    sequence: number | undefined,
    hashes: Iterable<readonly [string, string]>,
    read: Iterable<readonly [string, string]>,
    only?: (file: string) => boolean,
  ): Promise<void> {
    const snapshot = this.snapshot(sequence);
    if (!snapshot) return;
    // The hash maps outlive the snapshot (live-index-update.ts keeps them, forgetting the paths
    // that moved): once an event came, a hash read before it must not go in.
    const into = (target: Map<string, string>) => (entry: readonly [string, string]) => {
      if (sequence !== this.#sequence) return;
      if (!only || only(entry[0])) target.set(entry[0], entry[1]);
    };
    await forEachInSlices(hashes, into(snapshot.hashes));
    await forEachInSlices(read, into(snapshot.read));
  }
}

/**
 * False when git lists files no event reports: under node_modules/ (the watcher skips it for its
 * churn) or under the cache directory (its events are taken for Grove's and NotarAI's own files;
 * a file committed there would change unseen). No snapshot may vouch for them.
 */
function isWatched(listing: WorktreeFiles): boolean {
  const unwatched = (file: string) =>
    file.startsWith('node_modules/') ||
    file.includes('/node_modules/') ||
    file.startsWith(`${COOKIE_DIR}/`);
  return !listing.present.some(unwatched) && ![...listing.untracked].some(unwatched);
}

const listedSets = new WeakMap<WorktreeFiles, ReadonlySet<string>>();

/**
 * The files of the snapshot's listing (git's, which passed isWatched), or undefined without one:
 * the only paths whose content hash a snapshot may vouch for to mark_reconciled. A client may name
 * any file, and a file git does not list can change without an event: one under node_modules/, or
 * reached through a symbolic link to a directory the watcher skips (git lists the link itself).
 */
export function listedFiles(snapshot: ScanSnapshot | undefined): ReadonlySet<string> | undefined {
  const listing = snapshot?.listing;
  if (!listing) return undefined;
  let listed = listedSets.get(listing);
  if (!listed) {
    listed = new Set(listing.present);
    listedSets.set(listing, listed);
  }
  return listed;
}

/** The worktree's listing and specs: the snapshot's where it has them, else read now. */
export async function listingAndSpecs(
  root: string,
  known: ScanSnapshot | undefined,
  signal?: AbortSignal,
  specMemo?: SpecValidationMemo,
): Promise<[WorktreeFiles, SpecSet]> {
  return Promise.all([
    known?.listing ?? listWorktreeFileSets(root, signal ? { signal } : {}),
    known?.specs ?? loadSpecs(root, undefined, specMemo),
  ]);
}
