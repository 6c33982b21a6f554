// Which governed files still match what was reconciled: one classification pass over the cache
// rows, with the stat fast path (a stat row still valid gives the hash without reading) and the
// rest hashed on the worker pool; and classifyFiles, the same answer for a tool's files taken from
// the kept classification (classification-memo.ts) while the live index vouches.
import type { FileJobRunner } from './file-job-runner.ts';
import { FILE, HASHED, HIT, KNOWN_STRIDE, MISSING } from './file-jobs.ts';
import type { FingerprintResult, StatResult } from './file-jobs.ts';
import type { HashCache, ReconciledRow, StatRow } from './hash-cache.ts';
import { statRowValid } from './stat-fast-path.ts';
import type { Classification, ClassificationMemo } from './classification-memo.ts';
import {
  CHANGED,
  HAS_ROW,
  HAS_STAT,
  MATCHES_ROW,
  MISSING as MISSING_FILE,
  UNCHANGED,
  UNKNOWN,
  type ClassificationStore,
} from './classification-store.ts';
import type { SpecValidationMemo } from '../specs/spec-loader.ts';
import { listedFiles, type LiveIndex, type ScanSnapshot } from './live-index.ts';
import { forEachInSlices, nextSlice, sliceDue } from '../../platform/time-slices.ts';

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
  /** Spec validations remembered between runs (the CLI's: validated-spec-store.ts). */
  specMemo?: SpecValidationMemo;
  /** The last run's classification, remembered between runs (the CLI's). */
  classificationStore?: ClassificationStore;
}

/** A classification of no file yet. */
function emptyClassification(): Classification {
  return {
    changed: new Set(),
    unchanged: new Set(),
    missing: new Set(),
    stats: [],
    hashes: new Map(),
    read: new Map(),
  };
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
  /**
   * The lstat of every one of `paths` (FileJobRunner.statAll of the same array, whose paths are
   * unique), sent before the caller read the rows: compared with the stat rows here, and only the
   * files no row vouches for are read. Without it, the workers stat and compare (fingerprint).
   */
  stated?: Promise<StatResult>,
  /** The stat rows of `paths`, when the caller read them (else all are read). */
  statRowsRead?: ReadonlyMap<string, StatRow>,
): Promise<Classification> {
  const result = emptyClassification();
  const toCheck: string[] = [];
  /** With `stated`: where each of toCheck is in `paths`. */
  const toCheckAt: number[] = [];
  let position = 0;
  // Every loop here runs over up to every governed file: in slices (platform/time-slices.ts).
  for (const file of stated ? paths : new Set(paths)) {
    const row = reconciled.get(file);
    const current = known?.get(file);
    if (!row) {
      result.changed.add(file);
    } else if (current !== undefined) {
      result.hashes.set(file, current);
      (current === row.hash ? result.unchanged : result.changed).add(file);
    } else {
      toCheck.push(file);
      if (stated) toCheckAt.push(position);
    }
    position++;
    if (sliceDue()) await nextSlice(signal);
  }
  if (toCheck.length === 0) return result;
  const statRows = statRowsRead ?? (await parts.cache.readStats());
  const rowHashes: (string | undefined)[] = new Array<string | undefined>(toCheck.length);
  const { codes, hashed, linked } = stated
    ? await compareStated(parts, toCheck, toCheckAt, await stated, statRows, rowHashes, signal)
    : await fingerprintAll(parts, toCheck, statRows, rowHashes, signal);
  // A file with another name (a hard link) can change with no event for this one: the live index
  // keeps nothing while there is one (every call scans, and finds it again).
  if (linked.length > 0) parts.index?.refuseLinked(toCheck[linked[0] as number] as string);
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

/**
 * classifyAgainstCache of `paths` (unique) by NotarAI's rule, taking from the last run's memory
 * (classification-store.ts) what still holds: only the files it says nothing of any more are
 * classified, with the rows of those files alone when they are fewer than half. `stated`: the
 * lstat of every one of `paths` (FileJobRunner.statAll). What this run found is remembered for the
 * next. For a one-shot command: the rows are read in one statement call each.
 */
export async function classifyRemembering(
  parts: EngineParts,
  store: ClassificationStore,
  paths: readonly string[],
  stated: Promise<StatResult>,
  signal?: AbortSignal,
): Promise<Classification> {
  // Before any row is read: the rows read next are at least as new as what it names.
  const fingerprint = await parts.cache.reconciledFingerprint();
  const stat = await stated;
  const { verdicts, facts, stats } = store.recall(fingerprint, paths, stat);
  const result = emptyClassification();
  const unknown: number[] = [];
  await forEachInSlices(
    paths,
    (file, index) => {
      const verdict = verdicts[index];
      if (verdict === UNKNOWN) unknown.push(index);
      else if (verdict === UNCHANGED) result.unchanged.add(file);
      else if (verdict === CHANGED) result.changed.add(file);
      else if (verdict === MISSING_FILE) result.missing.add(file);
    },
    signal,
  );
  if (unknown.length > 0) {
    const asked = unknown.map((index) => paths[index] as string);
    const { codes: allCodes, stats: allStats } = stat;
    const subset: StatResult = {
      codes: new Uint8Array(unknown.length),
      stats: new Float64Array(unknown.length * KNOWN_STRIDE),
    };
    unknown.forEach((index, position) => {
      subset.codes[position] = allCodes[index] as number;
      subset.stats.set(
        allStats.subarray(index * KNOWN_STRIDE, (index + 1) * KNOWN_STRIDE),
        position * KNOWN_STRIDE,
      );
    });
    const few = unknown.length * 2 < paths.length;
    const rows = few ? await parts.cache.readRowsOf(asked) : undefined;
    const reconciled = rows?.reconciled ?? (await parts.cache.readReconciled());
    if ((await parts.cache.reconciledFingerprint()) !== fingerprint) {
      // Written meanwhile (another process marked, or the file was recreated): the rows read and
      // the facts recalled are of two databases. All of it again, from one read, not remembered.
      return classifyAgainstCache(
        parts,
        paths,
        await parts.cache.readReconciled(),
        signal,
        undefined,
        Promise.resolve(stat),
      );
    }
    const classified = await classifyAgainstCache(
      parts,
      asked,
      reconciled,
      signal,
      undefined,
      Promise.resolve(subset),
      rows?.stats,
    );
    for (const name of ['changed', 'unchanged', 'missing'] as const) {
      for (const file of classified[name]) result[name].add(file);
    }
    Object.assign(result, {
      stats: classified.stats,
      hashes: classified.hashes,
      read: classified.read,
    });
    // What this run found, for the next: the stat each hash was taken at (the hash job's own for
    // a file read now, this run's lstat for one a stat row vouched for).
    const hashedAt = new Map(classified.stats.map((row) => [row.path, row]));
    unknown.forEach((index, position) => {
      const file = asked[position] as string;
      const row = reconciled.get(file);
      if (row === undefined) return; // no HAS_ROW: changed, whatever the file
      const hash = classified.hashes.get(file);
      if (classified.missing.has(file) || hash === undefined) {
        facts[index] = HAS_ROW;
        return;
      }
      facts[index] = HAS_ROW | HAS_STAT | (hash === row.hash ? MATCHES_ROW : 0);
      const base = index * KNOWN_STRIDE;
      const read = hashedAt.get(file);
      if (read) stats.set([read.size, read.mtimeMs, read.ino, read.recordedMs], base);
      else {
        stats.set(
          subset.stats.subarray(position * KNOWN_STRIDE, (position + 1) * KNOWN_STRIDE),
          base,
        );
      }
    });
  }
  if (fingerprint !== undefined) store.remember(fingerprint, paths, facts, stats);
  return result;
}

/** The workers stat `toCheck`, compare with the stat rows, and hash where no row holds. */
async function fingerprintAll(
  parts: EngineParts,
  toCheck: readonly string[],
  statRows: ReadonlyMap<string, StatRow>,
  rowHashes: (string | undefined)[],
  signal: AbortSignal | undefined,
): Promise<FingerprintResult> {
  const signatures = new Float64Array(toCheck.length * KNOWN_STRIDE).fill(Number.NaN);
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
  return parts.files.fingerprint(parts.root, toCheck, signatures, signal);
}

/**
 * The same answer from an lstat made before: a file whose stat row holds is a HIT (the rule of
 * stat-fast-path.ts, as the workers apply it), the others are hashed (fingerprint with no rows:
 * looked up and stat'ed again as they are read), anything but a regular file is MISSING.
 */
async function compareStated(
  parts: EngineParts,
  toCheck: readonly string[],
  toCheckAt: readonly number[],
  stated: StatResult,
  statRows: ReadonlyMap<string, StatRow>,
  rowHashes: (string | undefined)[],
  signal: AbortSignal | undefined,
): Promise<FingerprintResult> {
  const codes = new Uint8Array(toCheck.length); // MISSING unless found below
  const again: number[] = [];
  const { codes: found, stats } = stated;
  await forEachInSlices(
    toCheck,
    (file, index) => {
      const at = toCheckAt[index] as number;
      if (found[at] !== FILE) return;
      const row = statRows.get(file);
      const base = at * KNOWN_STRIDE;
      if (statRowValid(row, stats[base]!, stats[base + 1]!, stats[base + 2]!)) {
        codes[index] = HIT;
        rowHashes[index] = row!.hash;
      } else {
        again.push(index);
      }
    },
    signal,
  );
  if (again.length === 0) return { codes, hashed: [], linked: [] };
  const noRows = new Float64Array(again.length * KNOWN_STRIDE).fill(Number.NaN);
  const read = await parts.files.fingerprint(
    parts.root,
    again.map((index) => toCheck[index] as string),
    noRows,
    signal,
  );
  for (const [position, index] of again.entries()) codes[index] = read.codes[position] as number;
  return {
    codes,
    hashed: read.hashed.map((entry) => ({ ...entry, index: again[entry.index] as number })),
    linked: read.linked.map((index) => again[index] as number),
  };
}

/**
 * Which of the paths asked match what was reconciled (classifyAgainstCache's three sets, as tests:
 * each path asked passes exactly one; a path not asked may pass any).
 */
export interface FileClasses {
  /** No row, or another hash. */
  isChanged(file: string): boolean;
  /** Had a row, but is no longer a readable file. */
  isMissing(file: string): boolean;
  /** Had a row, and matches it. */
  isUnchanged(file: string): boolean;
  stats: StatRow[];
  hashes: Map<string, string>;
  read: Map<string, string>;
}

/**
 * classifyAgainstCache of `files` (from the live index's listing when `known` is given) and
 * `extra` (a spec, listed or not), answered from the engine's kept classification while the index
 * vouches (`known` and its `generation`, read together; the rows read at `version`): only the
 * paths that moved since are classified again. Without the index or the memo: against the disk,
 * as before. A path git does not list is never kept (no event need report its change).
 */
export async function classifyFiles(
  parts: EngineParts,
  files: readonly string[],
  extra: readonly string[],
  reconciled: ReadonlyMap<string, ReconciledRow>,
  version: number,
  known: ScanSnapshot | undefined,
  generation: number | undefined,
  signal?: AbortSignal,
): Promise<FileClasses> {
  const listed = listedFiles(known);
  if (!parts.memo || !known || generation === undefined || !listed) {
    if (parts.memo) parts.memo.classified += files.length + extra.length;
    return asClasses(
      await classifyAgainstCache(parts, [...files, ...extra], reconciled, signal, known?.hashes),
    );
  }
  const unlisted = extra.filter((file) => !listed.has(file));
  const paths = parts.memo.pathSet(
    files,
    extra.filter((file) => listed.has(file)),
  );
  const kept = await parts.memo.classify(
    parts,
    paths,
    reconciled,
    version,
    known,
    generation,
    signal,
  );
  if (unlisted.length === 0) {
    return {
      isChanged: (file) => kept.changed.has(file),
      isMissing: (file) => kept.missing.has(file),
      isUnchanged: (file) => !kept.changed.has(file) && !kept.missing.has(file),
      stats: kept.stats,
      hashes: kept.hashes,
      read: kept.read,
    };
  }
  parts.memo.classified += unlisted.length;
  const apart = await classifyAgainstCache(parts, unlisted, reconciled, signal, known.hashes);
  const isApart = new Set(unlisted);
  return {
    isChanged: (file) => (isApart.has(file) ? apart.changed : kept.changed).has(file),
    isMissing: (file) => (isApart.has(file) ? apart.missing : kept.missing).has(file),
    isUnchanged: (file) =>
      isApart.has(file)
        ? apart.unchanged.has(file)
        : !kept.changed.has(file) && !kept.missing.has(file),
    stats: [...kept.stats, ...apart.stats],
    hashes: new Map([...kept.hashes, ...apart.hashes]),
    read: new Map([...kept.read, ...apart.read]),
  };
}

function asClasses(result: Classification): FileClasses {
  return {
    isChanged: (file) => result.changed.has(file),
    isMissing: (file) => result.missing.has(file),
    isUnchanged: (file) => result.unchanged.has(file),
    stats: result.stats,
    hashes: result.hashes,
    read: result.read,
  };
}
