// What the watcher can vouch for between two calls: nothing in the worktree or in git's HEAD,
// index and refs moved since a scan began. While that holds, the scan's results — git's listing
// of the worktree, the changed set vs each base, the specs, and the content hash of every file
// the scan hashed or found unchanged by the stat fast path — still describe the worktree, and a
// warm call answers from them instead of listing, stat'ing and hashing 20,000 files again.
//
// Correctness first: any event (a write, a create, a rename, a delete, a touch, a ref or index
// update) ends the snapshot, and the next call does a full scan. Only Grove's and NotarAI's own
// cache files (.notarai/.cache/) are not events here: they hold no worktree content. Events reach
// us a little after the fact, so a call first syncs: it creates a cookie file in the cache
// directory and waits for the watcher to report it; inotify keeps one queue in order, so every
// change made before the call has been reported by then. When the watcher cannot vouch (it is not
// subscribed, it fell back to polling, an error, the cookie does not come back in time) there is
// no snapshot and every call scans.
import path from 'node:path';
import {
  entryKindInsideRoot,
  removeFileInsideRoot,
  writeFileAtomicInsideRoot,
} from '../platform/confined-fs.ts';
import { forEachInSlices } from '../platform/time-slices.ts';
import { listWorktreeFileSets, type ChangedEntry, type WorktreeFiles } from './git-queries.ts';
import { loadSpecs, type SpecSet } from './spec-loader.ts';

/** Where cookies are written: the cache directory, which holds no worktree content. */
export const COOKIE_DIR = '.notarai/.cache';
const COOKIE_PREFIX = '.grove-sync-';
/** Longest a call waits for its cookie before it scans instead. */
export const SYNC_TIMEOUT_MS = 1_000;

/** The results of one scan, valid while nothing has moved since it began. */
export interface ScanSnapshot {
  listing?: WorktreeFiles;
  specs?: SpecSet;
  /** Base name as given -> its commit. */
  bases: Map<string, string>;
  /** Commit -> tracked changes vs the working tree. */
  changed: Map<string, ChangedEntry[]>;
  /** Path -> its content hash (BLAKE3, hex), as the scan read it or the stat fast path vouched. */
  hashes: Map<string, string>;
  /**
   * The hashes of `hashes` that were read from the file's bytes (by a scan or a mark), not taken
   * from a stat row: only these are recorded by mark_reconciled without reading, since an edit
   * that keeps size, mtime and inode fools the stat fast path, and a read then mends the row.
   */
  read: Map<string, string>;
  /** Spec path -> the listed files its globs govern (matching 20,000 paths per spec costs). */
  governed: Map<string, string[]>;
}

export class LiveIndex {
  readonly #root: string;
  /** Counts events since the watcher subscribed; a snapshot is valid while it has not moved. */
  #sequence = 0;
  #trusted = false;
  #snapshot: (ScanSnapshot & { sequence: number }) | undefined;
  #cookieCount = 0;
  readonly #cookies = new Map<string, () => void>();

  constructor(root: string) {
    this.#root = root;
  }

  /** The watcher is subscribed: events from now on are seen. */
  trust(): void {
    this.#trusted = true;
    this.#sequence++;
    this.#snapshot = undefined;
  }

  /** The watcher can no longer vouch (an error, polling): no snapshot until it trusts again. */
  distrust(): void {
    this.#trusted = false;
    this.#snapshot = undefined;
  }

  /** Events the watcher reported: absolute paths, in the worktree or in git's directories. */
  noteEvents(paths: readonly string[]): void {
    let moved = false;
    for (const absolute of paths) {
      const relative = path.relative(this.#root, absolute).split(path.sep).join('/');
      const cookie = path.posix.basename(relative);
      if (relative.startsWith(`${COOKIE_DIR}/`) || relative === COOKIE_DIR) {
        this.#cookies.get(cookie)?.();
        continue; // the caches: not worktree content
      }
      moved = true;
    }
    if (moved) {
      this.#sequence++;
      this.#snapshot = undefined;
    }
  }

  /**
   * Waits until every change made before this call has been reported. Resolves to the sequence a
   * scan starting now must record, or undefined when the watcher cannot vouch.
   */
  async sync(): Promise<number | undefined> {
    if (!this.#trusted) return undefined;
    const name = `${COOKIE_PREFIX}${process.pid}-${++this.#cookieCount}`;
    const relative = `${COOKIE_DIR}/${name}`;
    let timer: NodeJS.Timeout | undefined;
    const seen = new Promise<boolean>((resolve) => {
      this.#cookies.set(name, () => resolve(true));
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
      return this.#trusted ? this.#sequence : undefined;
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
    return this.#trusted ? this.#sequence : undefined;
  }

  /** True when a snapshot could answer (worth a sync). */
  get hasSnapshot(): boolean {
    return this.#trusted && this.#snapshot?.sequence === this.#sequence;
  }

  /** The snapshot of the last scan, if nothing moved since `sequence` (from sync()). */
  snapshot(sequence: number | undefined): ScanSnapshot | undefined {
    if (sequence === undefined || this.#snapshot?.sequence !== sequence) return undefined;
    return sequence === this.#sequence ? this.#snapshot : undefined;
  }

  /**
   * Adds to the snapshot the results of a scan that began at `sequence` (current() or sync()):
   * kept only if nothing moved since then. A scan need not sync to record: a change it missed
   * is reported later and ends the snapshot then.
   */
  record(sequence: number | undefined, update: (snapshot: ScanSnapshot) => void): void {
    if (sequence === undefined || sequence !== this.#sequence || !this.#trusted) return;
    const before = this.#snapshot?.listing;
    if (this.#snapshot?.sequence !== sequence) {
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
    if (listing && listing !== before && !isWatched(listing)) this.#snapshot = undefined;
  }

  /**
   * Adds content hashes to the snapshot recorded at `sequence`, if it is still the snapshot (see
   * record; hashes alone never start one). `read`: those the scan read from the files' bytes.
   * `only`: keeps only these paths. Merged in slices (100,000 hashes): an event meanwhile ends
   * the snapshot, and what is still merged goes into one that no call reads any more.
   */
  async recordHashes(
    sequence: number | undefined,
    hashes: Iterable<readonly [string, string]>,
    read: Iterable<readonly [string, string]>,
    only?: (file: string) => boolean,
  ): Promise<void> {
    const snapshot = this.snapshot(sequence);
    if (!snapshot) return;
    const into = (target: Map<string, string>) => (entry: readonly [string, string]) => {
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

/** The worktree's listing and specs: the snapshot's when it has both, else read now. */
export async function listingAndSpecs(
  root: string,
  known: ScanSnapshot | undefined,
  signal?: AbortSignal,
): Promise<[WorktreeFiles, SpecSet]> {
  if (known?.listing && known.specs) return [known.listing, known.specs];
  return Promise.all([listWorktreeFileSets(root, signal ? { signal } : {}), loadSpecs(root)]);
}
