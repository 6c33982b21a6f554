// Which governed files still match what was reconciled: one classification pass over the cache
// rows, with the stat fast path (a stat row still valid gives the hash without reading) and the
// rest hashed on the worker pool.
import type { FileJobRunner } from './file-job-runner.ts';
import { HASHED, HIT, KNOWN_STRIDE, MISSING } from './file-jobs.ts';
import type { HashCache, ReconciledRow, StatRow } from './hash-cache.ts';
import type { ClassificationMemo } from './classification-memo.ts';
import type { LiveIndex } from './live-index.ts';
import { forEachInSlices, nextSlice, sliceDue } from '../platform/time-slices.ts';

/** What the engine's operations work with (ReconcileEngine builds it once). */
export interface EngineParts {
  /** Real path of the worktree root. */
  root: string;
  cache: HashCache;
  files: FileJobRunner;
  /** Wall clock in ms. */
  now: () => number;
  /** What the watcher vouches for between calls (absent: every call scans). */
  index?: LiveIndex;
  /**
   * What is kept between calls while the index vouches: one classification per index version,
   * and what derives from the listing and the specs (absent: computed for each call).
   */
  memo?: ClassificationMemo;
}

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

/**
 * Which of `paths` match their cache row. A path without a row is changed (nothing is read);
 * one with a row is compared by hash, the hash coming from the stat fast path when valid.
 */
export async function classifyAgainstCache(
  parts: EngineParts,
  paths: readonly string[],
  reconciled: ReadonlyMap<string, ReconciledRow>,
  signal?: AbortSignal,
  /** Hashes the live index vouches are current: compared without a stat or a read. */
  known?: ReadonlyMap<string, string>,
): Promise<Classification> {
  const result: Classification = {
    changed: new Set(),
    unchanged: new Set(),
    missing: new Set(),
    stats: [],
    hashes: new Map(),
    read: new Map(),
  };
  const toCheck: string[] = [];
  // Every loop here runs over up to every governed file: in slices (platform/time-slices.ts).
  for (const file of new Set(paths)) {
    const row = reconciled.get(file);
    const current = known?.get(file);
    if (!row) {
      result.changed.add(file);
    } else if (current !== undefined) {
      result.hashes.set(file, current);
      (current === row.hash ? result.unchanged : result.changed).add(file);
    } else {
      toCheck.push(file);
    }
    if (sliceDue()) await nextSlice(signal);
  }
  if (toCheck.length === 0) return result;
  const statRows = await parts.cache.readStats();
  const signatures = new Float64Array(toCheck.length * KNOWN_STRIDE).fill(Number.NaN);
  const rowHashes: (string | undefined)[] = new Array<string | undefined>(toCheck.length);
  await forEachInSlices(
    toCheck,
    (file, index) => {
      const row = statRows.get(file);
      if (!row) return;
      const base = index * KNOWN_STRIDE;
      signatures[base] = row.size;
      signatures[base + 1] = row.mtimeMs;
      signatures[base + 2] = row.ino;
      signatures[base + 3] = row.recordedMs;
      rowHashes[index] = row.hash;
    },
    signal,
  );
  const { codes, hashed } = await parts.files.fingerprint(parts.root, toCheck, signatures, signal);
  const fresh = new Map<number, string>();
  await forEachInSlices(
    hashed,
    (entry) => {
      const file = toCheck[entry.index] as string;
      fresh.set(entry.index, entry.hash);
      result.read.set(file, entry.hash);
      result.stats.push({
        path: file,
        size: entry.size,
        mtimeMs: entry.mtimeMs,
        ino: entry.ino,
        hash: entry.hash,
        recordedMs: entry.recordedMs,
      });
    },
    signal,
  );
  await forEachInSlices(
    toCheck,
    (file, index) => {
      const code = codes[index];
      if (code === MISSING) {
        result.missing.add(file);
        return;
      }
      const hash = code === HIT ? rowHashes[index] : code === HASHED ? fresh.get(index) : undefined;
      if (hash !== undefined) result.hashes.set(file, hash);
      const matches = hash !== undefined && hash === reconciled.get(file)?.hash;
      (matches ? result.unchanged : result.changed).add(file);
    },
    signal,
  );
  return result;
}
