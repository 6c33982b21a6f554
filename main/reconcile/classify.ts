// Which governed files still match what was reconciled: one classification pass over the cache
// rows, with the stat fast path (a stat row still valid gives the hash without reading) and the
// rest hashed on the worker pool.
import type { FileJobRunner } from './file-job-runner.ts';
import { HASHED, HIT, KNOWN_STRIDE, MISSING } from './file-jobs.ts';
import type { HashCache, ReconciledRow, StatRow } from './hash-cache.ts';

/** What the engine's operations work with (ReconcileEngine builds it once). */
export interface EngineParts {
  /** Real path of the worktree root. */
  root: string;
  cache: HashCache;
  files: FileJobRunner;
  /** Wall clock in ms. */
  now: () => number;
}

/** Which files match the cache: the answer of one classification pass. */
export interface Classification {
  changed: Set<string>;
  unchanged: Set<string>;
  /** Had a cache row, but is no longer a readable file (deleted meanwhile). */
  missing: Set<string>;
  stats: StatRow[];
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
): Promise<Classification> {
  const result: Classification = {
    changed: new Set(),
    unchanged: new Set(),
    missing: new Set(),
    stats: [],
  };
  const toCheck: string[] = [];
  for (const file of new Set(paths)) {
    if (reconciled.has(file)) toCheck.push(file);
    else result.changed.add(file);
  }
  if (toCheck.length === 0) return result;
  const statRows = await parts.cache.readStats();
  const known = new Float64Array(toCheck.length * KNOWN_STRIDE).fill(Number.NaN);
  const rowHashes: (string | undefined)[] = new Array<string | undefined>(toCheck.length);
  toCheck.forEach((file, index) => {
    const row = statRows.get(file);
    if (!row) return;
    const base = index * KNOWN_STRIDE;
    known[base] = row.size;
    known[base + 1] = row.mtimeMs;
    known[base + 2] = row.ino;
    known[base + 3] = row.recordedMs;
    rowHashes[index] = row.hash;
  });
  const { codes, hashed } = await parts.files.fingerprint(parts.root, toCheck, known, signal);
  const fresh = new Map<number, string>();
  for (const entry of hashed) {
    const file = toCheck[entry.index] as string;
    fresh.set(entry.index, entry.hash);
    result.stats.push({
      path: file,
      size: entry.size,
      mtimeMs: entry.mtimeMs,
      ino: entry.ino,
      hash: entry.hash,
      recordedMs: entry.recordedMs,
    });
  }
  toCheck.forEach((file, index) => {
    const code = codes[index];
    if (code === MISSING) {
      result.missing.add(file);
      return;
    }
    const hash = code === HIT ? rowHashes[index] : code === HASHED ? fresh.get(index) : undefined;
    const matches = hash !== undefined && hash === reconciled.get(file)?.hash;
    (matches ? result.unchanged : result.changed).add(file);
  });
  return result;
}
