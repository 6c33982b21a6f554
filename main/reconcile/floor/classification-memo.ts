// One classification per index version: which governed files match what was reconciled, kept
// per path while nothing it depends on moved, and shared by the window's state, the live check,
// check_specs, get_drift_score, get_spec_diff and get_changed_artifacts (classify.ts
// classifyFiles). It depends on the reconciled rows (the hash cache's, with or without the
// committed snapshot: one slot per rule) and on each file's content, which the live index vouches
// for between events. A slot is kept while the rows are the same map at the same version
// (HashCache.reconciledVersion) and the live index's snapshot is of the same lineage (its hash
// map); then only the paths the index applied since (LiveIndex.movedSince) are classified again,
// and paths never classified are classified once. Without a snapshot the index vouches for,
// nothing is kept: every call classifies against the disk, as before.
import type { ReconciledRow, StatRow } from './hash-cache.ts';
import type { LiveIndex } from './live-index.ts';
import type { ScanSnapshot } from './live-index.ts';
import type { WorktreeFiles } from './git-queries.ts';
import { filterInSlices, forEachInSlices } from '../../platform/time-slices.ts';
import { compareUtf8, hasSortedUtf8 } from '../../platform/path-order.ts';
import { readCommittedSnapshot, withSnapshot, type CommittedSnapshot } from './state-file.ts';
import { statInsideRoot } from '../../platform/confined-fs.ts';
import { STATE_FILE } from './state-file.ts';

/** Moved paths waiting to be classified again before every covered set is scanned anew. */
const MAX_UNCLASSIFIED = 10_000;
const UNCHANGED = 0;
const CHANGED = 1;
const MISSING = 2;

/**
 * What the memo needs of the engine's parts (classify.ts EngineParts has it): the live index, and
 * whatever `classify` takes. Not EngineParts itself: classify.ts names this module's class in it.
 */
export interface MemoParts {
  index?: LiveIndex;
}

/** classify.ts classifyAgainstCache, given to the memo (it imports nothing of classify.ts). */
export type ClassifyFunction<P extends MemoParts> = (
  parts: P,
  paths: readonly string[],
  reconciled: ReadonlyMap<string, ReconciledRow>,
  signal?: AbortSignal,
  known?: ReadonlyMap<string, string>,
) => Promise<Classification>;

/** Which files match the cache: the answer of one classification pass. */
export interface Classification {
  changed: Set<string>;
  unchanged: Set<string>;
  /** Had a cache row, but is no longer a readable file (deleted meanwhile). */
  missing: Set<string>;
  stats: StatRow[];
  /** The current content hash of every path compared (for the live index). */
  hashes: Map<string, string>;
  /** Those of `hashes` read from the file now (not from a stat row or the live index). */
  read: Map<string, string>;
}

/** The answer for every path asked about (and maybe more): what classifyAgainstCache gives. */
export interface PathClasses {
  /** Every classified path that is changed (no row, or another hash). May hold paths not asked. */
  readonly changed: ReadonlySet<string>;
  /** Every classified path that had a row but is no longer a readable file. */
  readonly missing: ReadonlySet<string>;
  /** Stat rows of the files read for this answer (to record in Grove's stat cache). */
  readonly stats: StatRow[];
  /** Hashes found for this answer (for the live index). */
  readonly hashes: Map<string, string>;
  readonly read: Map<string, string>;
}

interface Slot {
  rows: ReadonlyMap<string, ReconciledRow>;
  rowsVersion: number;
  hashes: Map<string, string>;
  generation: number;
  status: Map<string, number>;
  changed: Set<string>;
  missing: Set<string>;
  /** True once `changed` and `missing` were handed out: copied before they change again. */
  shared: boolean;
  /** Path sets every path of which was classified, but for those in `unclassified`. */
  covered: WeakSet<ReadonlySet<string>>;
  /** Paths forgotten (they moved) and not classified again since. */
  unclassified: Set<string>;
}

/** A committed snapshot as read, with the stat of the file it was read from. */
interface CommittedMemo {
  signature: string;
  value: Awaited<ReturnType<typeof readCommittedSnapshot>>;
}

/** Per engine: the kept classifications (one per rule), the committed snapshot, the merged rows. */
export class ClassificationMemo {
  /** Keyed by the rows map (the cache's, or the cache merged with the committed snapshot). */
  #slots = new Map<ReadonlyMap<string, ReconciledRow>, Slot>();
  #committed: CommittedMemo | undefined;
  #merged:
    | {
        cache: ReadonlyMap<string, ReconciledRow>;
        version: number;
        snapshot: CommittedSnapshot | undefined;
        rows: ReadonlyMap<string, ReconciledRow>;
      }
    | undefined;
  readonly #classify: ClassifyFunction<MemoParts>;

  /** `classify`: classify.ts classifyAgainstCache (called with the parts given to classify()). */
  constructor(classify: ClassifyFunction<never>) {
    this.#classify = classify as ClassifyFunction<MemoParts>;
  }

  /** How many paths were classified in all (tests and diagnostics: an edit classifies one). */
  classified = 0;
  #kept = new Map<string, { keys: readonly unknown[]; value: unknown }>();

  /** `value`, or the one kept under `name` if `equal` says they are the same (kept: identity). */
  same<T>(name: string, value: T, equal: (a: T, b: T) => boolean): T {
    const kept = this.#kept.get(name);
    if (kept && kept.keys.length === 0 && equal(kept.value as T, value)) return kept.value as T;
    this.#kept.set(name, { keys: [], value });
    return value;
  }

  /**
   * `compute()`'s value, computed again only when one of `keys` is not the same (===) as last
   * time under `name`: for what derives from the live index's listing, specs and governed sets,
   * which keep their identity while nothing they hold moved.
   */
  async keep<T>(name: string, keys: readonly unknown[], compute: () => Promise<T>): Promise<T> {
    const kept = this.#kept.get(name);
    if (
      kept &&
      kept.keys.length === keys.length &&
      kept.keys.every((key, at) => key === keys[at])
    ) {
      return kept.value as T;
    }
    const value = await compute();
    this.#kept.set(name, { keys, value });
    return value;
  }

  #alongListing = new Map<
    string,
    { keys: readonly unknown[]; listing: WorktreeFiles; generation: number; value: unknown }
  >();

  /**
   * As keep, for what also reads the listing: while `keys` hold and the listing moved only by
   * paths the live index applied since the kept one's `generation`, the kept value is brought up
   * to date by `update` with the files added to and removed from the listing (it must return a
   * new value, never change the kept one: a caller may still be reading it), not computed again.
   */
  async keepAlongListing<T>(
    parts: MemoParts,
    name: string,
    keys: readonly unknown[],
    listing: WorktreeFiles,
    generation: number | undefined,
    compute: () => Promise<T>,
    update: (value: T, added: readonly string[], removed: readonly string[]) => Promise<T>,
  ): Promise<T> {
    const kept = this.#alongListing.get(name);
    const same =
      kept !== undefined &&
      kept.keys.length === keys.length &&
      kept.keys.every((key, at) => key === keys[at]);
    if (same && kept.listing === listing) return kept.value as T;
    let value: T;
    const moved =
      same && generation !== undefined && generation >= kept.generation
        ? parts.index?.movedSince(kept.generation)
        : undefined;
    if (generation === undefined) return compute();
    if (moved && kept) {
      const added: string[] = [];
      const removed: string[] = [];
      for (const file of new Set(moved)) {
        const before = hasSortedUtf8(kept.listing.present, file);
        const after = hasSortedUtf8(listing.present, file);
        if (after && !before) added.push(file);
        else if (before && !after) removed.push(file);
      }
      value = await update(kept.value as T, added, removed);
    } else {
      value = await compute();
    }
    this.#alongListing.set(name, { keys, listing, generation, value });
    return value;
  }

  #pathSets = new WeakMap<readonly string[], Map<string, ReadonlySet<string>>>();

  /**
   * `files` and `extra` as one set (what classify takes), the same set while `files` is the same
   * array (the live index's governed sets and listing are never changed in place, only replaced)
   * and `extra` holds the same paths: then classify knows it covered them all before.
   */
  pathSet(files: readonly string[], extra: readonly string[]): ReadonlySet<string> {
    let byExtra = this.#pathSets.get(files);
    if (!byExtra) {
      byExtra = new Map();
      this.#pathSets.set(files, byExtra);
    }
    const key = extra.join('\0');
    let paths = byExtra.get(key);
    if (!paths) {
      paths = new Set([...files, ...extra]);
      byExtra.set(key, paths);
    }
    return paths;
  }

  /**
   * The committed snapshot, read again only when the state file's stat moved (size, times,
   * inode): the same object otherwise, so what is keyed by it is kept.
   */
  async committed(root: string): Promise<Awaited<ReturnType<typeof readCommittedSnapshot>>> {
    let signature: string;
    try {
      const { stats, realPath } = await statInsideRoot(root, STATE_FILE);
      signature = `${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}:${stats.ino}:${realPath}`;
    } catch (error) {
      signature = `none: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (this.#committed?.signature === signature) return this.#committed.value;
    const value = await readCommittedSnapshot(root);
    this.#committed = { signature, value };
    return value;
  }

  /** withSnapshot(cache, snapshot), the same map while neither moved. */
  merged(
    cache: ReadonlyMap<string, ReconciledRow>,
    version: number,
    snapshot: CommittedSnapshot | undefined,
  ): ReadonlyMap<string, ReconciledRow> {
    if (!snapshot || snapshot.rows.size === 0) return cache; // (withSnapshot's own shortcut)
    const kept = this.#merged;
    if (kept?.cache === cache && kept.version === version && kept.snapshot === snapshot) {
      return kept.rows;
    }
    const rows = withSnapshot(cache, snapshot);
    this.#merged = { cache, version, snapshot, rows };
    return rows;
  }

  /**
   * Classifies `paths` against `reconciled` (read at `rowsVersion`), from what is kept where the
   * live index's snapshot `known` (at the index's `generation`, read with it) still vouches.
   */
  async classify(
    parts: MemoParts,
    paths: ReadonlySet<string>,
    reconciled: ReadonlyMap<string, ReconciledRow>,
    rowsVersion: number,
    known: ScanSnapshot | undefined,
    generation: number | undefined,
    signal?: AbortSignal,
  ): Promise<PathClasses> {
    if (!known || generation === undefined) {
      // Nothing vouches: classify against the disk, keep nothing.
      this.#slots.clear();
      const list = [...paths];
      this.classified += list.length;
      const result = await this.#classify(parts, list, reconciled, signal);
      return {
        changed: new Set([...result.changed]),
        missing: result.missing,
        stats: result.stats,
        hashes: result.hashes,
        read: result.read,
      };
    }
    let slot = this.#slots.get(reconciled);
    const moved = slot ? parts.index?.movedSince(slot.generation) : undefined;
    if (
      !slot ||
      slot.rowsVersion !== rowsVersion ||
      slot.hashes !== known.hashes ||
      moved === undefined
    ) {
      // Rows of other maps are gone for good once these changed: keep at most the two rules.
      for (const [rows, other] of this.#slots) {
        if (other.hashes !== known.hashes || this.#slots.size >= 2) this.#slots.delete(rows);
      }
      slot = {
        rows: reconciled,
        rowsVersion,
        hashes: known.hashes,
        generation,
        status: new Map(),
        changed: new Set(),
        missing: new Set(),
        shared: false,
        covered: new WeakSet(),
        unclassified: new Set(),
      };
      this.#slots.set(reconciled, slot);
    } else {
      if (moved.length > 0) unshare(slot);
      for (const file of moved) {
        forget(slot, file);
        slot.unclassified.add(file);
      }
      if (slot.unclassified.size > MAX_UNCLASSIFIED) {
        slot.covered = new WeakSet();
        slot.unclassified.clear();
      }
      slot.generation = generation;
    }
    const current = slot;
    let todo: string[] = [];
    if (current.covered.has(paths)) {
      for (const file of current.unclassified) {
        if (paths.has(file) && !current.status.has(file)) todo.push(file);
      }
    } else {
      await forEachInSlices(
        paths,
        (file) => {
          if (!current.status.has(file)) todo.push(file);
        },
        signal,
      );
      todo = [...new Set(todo)];
    }
    if (todo.length === 0) {
      current.covered.add(paths);
      current.shared = true;
      return {
        changed: current.changed,
        missing: current.missing,
        stats: [],
        hashes: new Map(),
        read: new Map(),
      };
    }
    this.classified += todo.length;
    const result = await this.#classify(parts, todo, reconciled, signal, known.hashes);
    // Paths that moved while this ran are classified again next time (movedSince the generation
    // read before it started), so what it found may be kept.
    // Another call may have carried the slot to a later generation meanwhile: what moved since
    // this one began is not kept (it may be older than that call's view), only answered.
    const stale =
      current.generation === generation
        ? undefined
        : new Set(parts.index?.movedSince(generation) ?? []); // none: the slot is not reused
    unshare(current);
    const keep = (file: string) => !stale?.has(file);
    for (const file of result.unchanged) if (keep(file)) set(current, file, UNCHANGED);
    for (const file of result.changed) if (keep(file)) set(current, file, CHANGED);
    for (const file of result.missing) if (keep(file)) set(current, file, MISSING);
    for (const file of todo) if (keep(file)) current.unclassified.delete(file);
    current.covered.add(paths);
    current.shared = true;
    let changed: ReadonlySet<string> = current.changed;
    let missing: ReadonlySet<string> = current.missing;
    if (stale && stale.size > 0) {
      const answered = {
        ...current,
        status: new Map<string, number>(),
        changed: new Set(changed),
        missing: new Set(missing),
      };
      for (const file of result.unchanged) if (stale.has(file)) forget(answered, file);
      for (const file of result.changed) if (stale.has(file)) set(answered, file, CHANGED);
      for (const file of result.missing) if (stale.has(file)) set(answered, file, MISSING);
      changed = answered.changed;
      missing = answered.missing;
    }
    return {
      changed,
      missing,
      stats: result.stats,
      hashes: result.hashes,
      read: result.read,
    };
  }
}

/** The answer's sets are never changed once handed out (a caller reads them across turns). */
function unshare(slot: Slot): void {
  if (!slot.shared) return;
  slot.changed = new Set(slot.changed);
  slot.missing = new Set(slot.missing);
  slot.shared = false;
}

function forget(slot: Slot, file: string): void {
  slot.status.delete(file);
  slot.changed.delete(file);
  slot.missing.delete(file);
}

function set(slot: Slot, file: string, status: number): void {
  forget(slot, file);
  slot.status.set(file, status);
  if (status === CHANGED) slot.changed.add(file);
  else if (status === MISSING) slot.missing.add(file);
}

/**
 * The files of `governed` (sorted, UTF-8 order) that are in `changed`, in that order: by a binary
 * search for each changed file when they are few, else by a pass over `governed`.
 */
export async function changedAmong(
  governed: readonly string[],
  changed: ReadonlySet<string>,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  if (changed.size * 24 >= governed.length) {
    return filterInSlices(governed, (file) => changed.has(file), signal);
  }
  const found: string[] = [];
  for (const file of changed) if (hasSortedUtf8(governed, file)) found.push(file);
  return found.sort(compareUtf8);
}
