// What NotarAI 0.7's check and score both start from, gathered once per call: git's listing, the
// specs, what each governs, the orphaned globs, the system spec's exclude, and the governed files
// changed since reconciled (NotarAI's rule, the hash cache alone; or Grove's, `withSnapshot`: the
// cache, then the committed snapshot). A running worktree process reads them from the live index
// while it vouches for them; a CLI call opens its own parts (`standaloneParts`).
import { realWorktreeRoot } from '../../platform/confined-fs.ts';
import { compileGlobs, matchesAnyInSlices, matchingInSlices } from '../../platform/glob-matcher.ts';
import type { GlobSet } from '../../platform/glob-matcher.ts';
import { forEachInSlices } from '../../platform/time-slices.ts';
import { classifyAgainstCache, classifyRemembering, type EngineParts } from '../floor/classify.ts';
import { ClassificationStore } from '../floor/classification-store.ts';
import { CLI_MAIN_THREAD_STAT_PATHS, FileJobRunner } from '../floor/file-job-runner.ts';
import type { WorktreeFiles } from '../floor/git-queries.ts';
import { HashCache, type ReconciledRow } from '../floor/hash-cache.ts';
import { listingAndSpecs, type ScanSnapshot } from '../floor/live-index.ts';
import { checkSpecs, type CheckSpec } from './notarai-specs.ts';
import { VALIDATOR_BUILD, type SpecSet } from '../specs/spec-loader.ts';
import { ValidatedSpecStore } from '../specs/validated-spec-store.ts';
import { NOTARAI_DIR } from '../specs/spec-paths.ts';
import { readCommittedSnapshot, withSnapshot } from '../floor/state-file.ts';

/** What check and score both start from: one listing, the specs, what each governs. */
export interface NotaraiInputs {
  listing: WorktreeFiles;
  specSet: SpecSet;
  specs: CheckSpec[];
  /** Spec path -> the listed files its artifact globs match (git's order: UTF-8 bytes). */
  governed: Map<string, string[]>;
  governedAll: Set<string>;
  /** Per spec: its globs that match no listed file. */
  orphaned: Map<string, CheckSpec['globs']>;
  /** The system spec's `exclude` patterns (matches nothing without one). */
  exclude: GlobSet;
  /**
   * Governed files changed since reconciled (or without a row); null: nothing to compare with (no
   * cache database, and with `withSnapshot` no committed snapshot either).
   */
  changed: Set<string> | null;
  /**
   * With `withSnapshot`: how many governed files NotarAI's rule (the hash cache alone) counts as
   * changed, for the window's one sentence on the difference; null without a cache database
   * (NotarAI then reports none). Without `withSnapshot`: `changed`'s size (the same rule).
   */
  changedByCacheAlone: number | null;
  /** The live index's generation `listing` is of (what moved since: LiveIndex.movedSince). */
  generation?: number;
  /** The live index's sequence the inputs were read at (its snapshot then, if still current). */
  sequence?: number;
}

export const isInternal = (file: string) =>
  file.startsWith(`${NOTARAI_DIR}/`) || file.startsWith('.git/');

/**
 * The inputs that derive from the specs and what each governs (not from the reconciled rows, nor
 * from the listing beyond the governed sets).
 */
type Layout = Omit<
  NotaraiInputs,
  'listing' | 'changed' | 'changedByCacheAlone' | 'generation' | 'sequence'
>;

/** No cache database: no rows (one map, so what is kept for it stays kept). */
const NO_ROWS: ReadonlyMap<string, ReconciledRow> = new Map();

/** Gathers the inputs, from the live index's snapshot where it vouches for them. */
export async function gatherInputs(
  parts: EngineParts,
  options: {
    sync?: boolean;
    signal?: AbortSignal;
    withSnapshot?: boolean;
    /** `changed` is not wanted (export-context): null, the hash cache not read, nothing classified. */
    skipChanged?: boolean;
  } = {},
): Promise<NotaraiInputs> {
  const { signal } = options;
  const sequence = options.sync
    ? await (parts.index?.hasSnapshot ? parts.index.sync() : parts.index?.current())
    : await parts.index?.settled();
  const known = parts.index?.snapshot(sequence);
  const generation = known ? parts.index?.generation : undefined;
  const [listing, specSet] = await listingAndSpecs(parts.root, known, signal, parts.specMemo);
  // While the index keeps the listing, the specs and their governed sets (an edit moves none of
  // them), what derives from them is the one computed before.
  const governedKnown = specSet.valid.map((spec) => known?.governed.get(spec.path));
  let layout: Layout;
  if (parts.memo && known) {
    const memo = parts.memo;
    const specs = await memo.keep('check-specs', [specSet], () => checkSpecs(specSet, signal));
    // A spec the index keeps no governed set for is matched against the listing: then the layout
    // moves with the listing too (a new file no spec governs moves nothing else).
    const valid = new Set(specSet.valid.map((spec) => spec.path));
    const matched = specs.some(
      (spec) => spec.globs.length > 0 && !(valid.has(spec.path) && known.governed.has(spec.path)),
    );
    const keys = [specSet, specs, matched ? listing : undefined, ...governedKnown];
    layout = await memo.keep('check-layout', keys, () =>
      layoutOf(listing, specSet, specs, known, signal),
    );
  } else {
    layout = await layoutOf(listing, specSet, await checkSpecs(specSet, signal), known, signal);
  }
  const { governed, governedAll } = layout;
  let changed: Set<string> | null = null;
  let changedByCacheAlone: number | null = null;
  const skip = options.skipChanged === true;
  const cacheExists = !skip && (await parts.cache.exists());
  // NotarAI's rule: the hash cache alone. Grove's (`withSnapshot`, the window's): the cache, and
  // for files it has no row for, the committed snapshot (a fresh clone has only that).
  const committed =
    options.withSnapshot && !skip
      ? (await (parts.memo?.committed(parts.root) ?? readCommittedSnapshot(parts.root))).snapshot
      : undefined;
  if (cacheExists || committed !== undefined) {
    // A call without an index or memo (the CLI) has every governed file to stat: the workers
    // start on that now, while this thread reads the rows (classify.ts compares the two).
    const paths = [...governedAll];
    const stated =
      cacheExists && !parts.memo && known === undefined
        ? parts.files.statAll(parts.root, paths, signal)
        : undefined;
    stated?.catch(() => undefined); // awaited by classify, unless a read before it throws
    // The CLI remembers its classification between runs: only what moved since is classified.
    const store = committed === undefined ? parts.classificationStore : undefined;
    const rows = cacheExists && !(store && stated) ? await parts.cache.readReconciled() : NO_ROWS;
    // Read after the rows: a new read moves it, and a write under way moves it again once done.
    const version = parts.cache.reconciledVersion;
    const reconciled = parts.memo
      ? parts.memo.merged(rows, version, committed)
      : withSnapshot(rows, committed);
    const classify = (against: ReadonlyMap<string, ReconciledRow>) =>
      parts.memo
        ? parts.memo.classify(parts, governedAll, against, version, known, generation, signal)
        : store && stated
          ? classifyRemembering(parts, store, paths, stated, signal)
          : classifyAgainstCache(parts, paths, against, signal, undefined, stated);
    const classification = await classify(reconciled);
    changed = new Set();
    for (const file of classification.changed) if (governedAll.has(file)) changed.add(file);
    for (const file of classification.missing) if (governedAll.has(file)) changed.add(file);
    changedByCacheAlone = changed.size;
    if (committed !== undefined) {
      // Files the cache has a row for are judged by it under both rules; the others are changed
      // under NotarAI's rule whatever the snapshot says: its count is NotarAI's classification.
      if (cacheExists) {
        const alone = await classify(rows);
        let count = 0;
        for (const file of alone.changed) if (governedAll.has(file)) count++;
        for (const file of alone.missing) if (governedAll.has(file)) count++;
        changedByCacheAlone = count;
        await parts.cache.recordStats(alone.stats);
      } else {
        changedByCacheAlone = null;
      }
    }
    await parts.cache.recordStats(classification.stats);
    parts.index?.record(sequence, (snapshot) => {
      snapshot.listing = listing;
      snapshot.specs = specSet;
      for (const spec of specSet.valid) {
        const files = governed.get(spec.path);
        if (files) snapshot.governed.set(spec.path, files);
      }
    });
    await parts.index?.recordHashes(sequence, classification.hashes, classification.read);
  } else {
    parts.index?.record(sequence, (snapshot) => {
      snapshot.listing = listing;
      snapshot.specs = specSet;
      for (const spec of specSet.valid) {
        const files = governed.get(spec.path);
        if (files) snapshot.governed.set(spec.path, files);
      }
    });
  }
  return {
    ...layout,
    listing,
    changed,
    changedByCacheAlone,
    ...(parts.memo && generation !== undefined ? { generation } : {}),
    ...(sequence !== undefined ? { sequence } : {}),
  };
}

/** What check and score take from the listing and the specs: what each spec governs. */
async function layoutOf(
  listing: WorktreeFiles,
  specSet: SpecSet,
  specs: CheckSpec[],
  known: ScanSnapshot | undefined,
  signal: AbortSignal | undefined,
): Promise<Layout> {
  const governed = new Map<string, string[]>();
  const governedAll = new Set<string>();
  const orphaned = new Map<string, CheckSpec['globs']>();
  const valid = new Set(specSet.valid.map((loaded) => loaded.path));
  for (const spec of specs) {
    const files =
      (valid.has(spec.path) ? known?.governed.get(spec.path) : undefined) ??
      (spec.globs.length === 0
        ? []
        : await matchingInSlices(
            spec.globs.map((glob) => glob.set),
            listing.present,
            signal,
          ));
    governed.set(spec.path, files);
    await forEachInSlices(files, (file) => governedAll.add(file), signal);
    const orphans: CheckSpec['globs'] = [];
    for (const glob of spec.globs) {
      if (!(await matchesAnyInSlices(glob.set, files, signal))) orphans.push(glob);
    }
    orphaned.set(spec.path, orphans);
  }
  const system = specs.find((spec) => spec.path === specSet.systemSpec);
  const excludeList = system?.value['exclude'];
  let exclude: GlobSet;
  try {
    exclude = compileGlobs(
      Array.isArray(excludeList)
        ? excludeList.filter((item): item is string => typeof item === 'string')
        : [],
    );
  } catch {
    exclude = compileGlobs([]);
  }
  return { specSet, specs, governed, governedAll, orphaned, exclude };
}

/** Engine parts for one call outside a worktree process; closed by the returned function. */
export async function standaloneParts(root: string): Promise<[EngineParts, () => void]> {
  const real = await realWorktreeRoot(root);
  // A CLI call serves no one else: the rows are read in one go (HashCache's bulkReads).
  const cache = new HashCache(real, { bulkReads: true });
  // ... and stats up to CLI_MAIN_THREAD_STAT_PATHS files itself, without starting workers.
  const files = new FileJobRunner(undefined, { statOnMainThreadUpTo: CLI_MAIN_THREAD_STAT_PATHS });
  // ... and takes the specs' validations from the last run's where their texts are the same.
  const specMemo = VALIDATOR_BUILD ? new ValidatedSpecStore(real, VALIDATOR_BUILD) : undefined;
  // ... and classifies only the governed files that moved since its last run there.
  const classificationStore = new ClassificationStore(real);
  const parts: EngineParts = {
    root: real,
    cache,
    files,
    now: Date.now,
    classificationStore,
    ...(specMemo ? { specMemo } : {}),
  };
  return [
    parts,
    () => {
      cache.close();
      files.close();
      specMemo?.save();
      classificationStore.save();
    },
  ];
}

/** Runs `run` with parts opened for it alone, flushed and closed after. */
export async function withStandalone<T>(
  root: string,
  run: (parts: EngineParts) => Promise<T>,
): Promise<T> {
  const [parts, close] = await standaloneParts(root);
  try {
    return await run(parts);
  } finally {
    await parts.cache.flush();
    close();
  }
}

/**
 * `report` with the cache's warnings of the run added (a corrupt database recreated, ...): the
 * CLI prints a report's warnings; a worktree process takes the cache's itself (the window's).
 */
export function withCacheWarnings<T extends { warnings: string[] }>(
  parts: EngineParts,
  report: T,
): T {
  report.warnings.push(...parts.cache.takeWarnings());
  return report;
}
