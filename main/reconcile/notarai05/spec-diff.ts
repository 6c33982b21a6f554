// get_spec_diff: which of a spec's governed files changed since they were reconciled, and the
// diff vs the base of those that differ from it — computed for that intersection only
// (intersection-diff.ts), spec files whole in spec_changes with the system spec for context.
import type {
  FileReviewStatus,
  SpecDiffResult,
  SpecReview,
} from '../../../shared/reconcile-results.ts';
import path from 'node:path';
import { hasNulByte, isBinaryByExtension } from '../floor/binary-files.ts';
import { FILE_CONCURRENCY, mapLimit } from '../../platform/concurrency.ts';
import {
  changedVsBase,
  resolveBase,
  withUntracked,
  type ChangedEntry,
  type ChangedVsBase,
} from '../floor/git-queries.ts';
import { compileExcludePatterns } from '../specs/exclude-patterns.ts';
import type { ReconciledRow } from '../floor/hash-cache.ts';
import { diffPathsAgainstBase } from '../floor/intersection-diff.ts';
import { compareUtf8, sortedUtf8 } from '../../platform/path-order.ts';
import {
  categoryOf,
  formatSpecError,
  governs,
  isSpecPath,
  type ValidSpec,
} from '../specs/spec-loader.ts';
import { readCommittedSnapshot, withSnapshot } from '../floor/state-file.ts';
import { readSpecText } from '../specs/spec-paths.ts';
import { filterInSlices, forEachInSlices } from '../../platform/time-slices.ts';

import { listingAndSpecs } from '../floor/live-index.ts';
import { classifyFiles, type EngineParts } from '../floor/classify.ts';
import { checkSpecPath, loadValidSpec } from '../specs/spec-request.ts';

export interface SpecDiffRequest {
  spec_path: string;
  base_branch: string;
  exclude_patterns?: string[] | undefined;
  bypass_cache?: boolean | undefined;
  /** Grove: files the cache has no row for are judged by the committed snapshot (the window's rule). */
  with_snapshot?: boolean | undefined;
  /** Grove: add `review` (each file's status vs the base, never-reconciled files, other specs). */
  review?: boolean | undefined;
}

/** The rows of a bypassed cache: none (one map, so the memo's merged rows stay the cache's). */
const NO_ROWS: ReadonlyMap<string, ReconciledRow> = new Map();

/** What get_spec_diff needs beyond the engine's parts. */
export interface SpecDiffContext extends EngineParts {
  /** The repository's git directory, common directory and object format (cached by the engine). */
  gitDirectories(): Promise<{ gitDir: string; commonDir: string; objectFormat: string }>;
  /** Milliseconds per phase, for the benchmark (ReconcileEngine.lastTimings). */
  onTimings(timings: Record<string, number>): void;
}

/**
 * get_spec_diff: the spec's governed files that differ from the cache, and the diff vs the base
 * of those that differ from it. Warnings come apart, for the engine to add the cache's.
 */
export async function computeSpecDiff(
  context: SpecDiffContext,
  request: SpecDiffRequest,
  signal?: AbortSignal,
): Promise<{ result: SpecDiffResult; warnings: string[] }> {
  // What the watcher vouches for since the last scan (live-index.ts). Confirming it costs a
  // cookie file and its event (~50 ms of the watcher's batching), so the answer is worked out
  // from the snapshot meanwhile, and kept only if nothing moved; otherwise, a full scan.
  const index = context.index;
  if (index?.hasSnapshot) {
    const sequence = await index.settled();
    const syncing = index.sync();
    syncing.catch(() => undefined);
    const speculative = await specDiffFrom(context, request, signal, sequence, true).catch(
      () => undefined,
    );
    const synced = await syncing;
    if (speculative && synced === sequence) return speculative;
    // Something moved meanwhile: the sync applied it, and the snapshot answers if it still can
    // (from the kept classification, what moved classified again).
    if (index.snapshot(synced)) return specDiffFrom(context, request, signal, synced, true);
  }
  return specDiffFrom(context, request, signal, index?.current(), false);
}

/**
 * get_spec_diff from the snapshot recorded at `sequence` when `fromIndex` (the caller checks it
 * is still valid), or from a full scan recorded under `sequence`.
 */
async function specDiffFrom(
  context: SpecDiffContext,
  request: SpecDiffRequest,
  signal: AbortSignal | undefined,
  sequence: number | undefined,
  fromIndex: boolean,
): Promise<{ result: SpecDiffResult; warnings: string[] }> {
  const lap = lapTimer(context.onTimings);
  const index = context.index;
  const specPath = await checkSpecPath(context.root, request.spec_path);
  const spec = await loadValidSpec(context.root, specPath);
  const known = fromIndex ? index?.snapshot(sequence) : undefined;
  // (Read with the snapshot: the classification kept is brought up to it.)
  const generation = known ? index?.generation : undefined;
  const sha =
    known?.bases.get(request.base_branch) ?? (await resolveBase(context.root, request.base_branch));
  lap(known ? 'spec+base (live index)' : 'spec+base');
  const bypass = request.bypass_cache === true;
  const excludePatterns = request.exclude_patterns ?? [];
  // git works out the changed set while the files are listed and checked against the cache.
  const knownChanges = known?.changed.get(sha);
  const trackedPromise = knownChanges
    ? Promise.resolve(knownChanges)
    : changedVsBase(context.root, sha, signal);
  trackedPromise.catch(() => undefined);
  const [files, specs] = await listingAndSpecs(context.root, known, signal);
  lap('ls-files+specs');
  // Loops over every listed or governed file run in slices (platform/time-slices.ts).
  const governedListed =
    known?.governed.get(specPath) ??
    (await filterInSlices(files.present, (file) => governs(spec, file), signal));
  lap('globs');
  // NotarAI opens (so creates) its cache here unless the cache is bypassed or the spec governs
  // no file at all.
  if (!bypass && governedListed.length > 0) await context.cache.create();
  // Grove's rule (with_snapshot): the committed snapshot counts where the cache has no row.
  const memo = context.memo;
  const committed =
    request.with_snapshot === true && !bypass
      ? await (memo?.committed(context.root) ?? readCommittedSnapshot(context.root))
      : {};
  const rows = bypass ? NO_ROWS : await context.cache.readReconciled();
  const version = context.cache.reconciledVersion; // (after the rows: see notarai-inputs.ts)
  const reconciled: ReadonlyMap<string, ReconciledRow> = memo
    ? memo.merged(rows, version, committed.snapshot)
    : withSnapshot(rows, committed.snapshot);
  // Bypassed, nothing is read (no file has a row): the memo's rules are left as they are.
  const classification = await classifyFiles(
    context,
    governedListed,
    [specPath],
    reconciled,
    version,
    bypass ? undefined : known,
    generation,
    signal,
  );
  lap('cache+classify');
  const tracked = await trackedPromise;
  index?.record(sequence, (snapshot) => {
    snapshot.bases.set(request.base_branch, sha);
    snapshot.changed.set(sha, tracked);
    snapshot.listing = files;
    snapshot.specs = specs;
    snapshot.governed.set(specPath, governedListed);
  });
  await index?.recordHashes(sequence, classification.hashes, classification.read);
  const changed = withUntracked(tracked, files.untracked);
  lap('changed-vs-base (wait)');
  // One pass over the governed files (200,000 of them in the benchmark).
  const filesOut: string[] = [];
  let skipped: string[] = [];
  const changedSpecs: string[] = [];
  await forEachInSlices(
    governedListed,
    (file) => {
      if (changed.gone.has(file) || classification.isMissing(file)) return;
      const differs = classification.isChanged(file);
      if (isSpecPath(file)) {
        if (differs) changedSpecs.push(file);
      } else if (differs) {
        filesOut.push(file);
      } else if (classification.isUnchanged(file)) {
        skipped.push(file);
      }
    },
    signal,
  );
  const primaryChanged = !bypass && classification.isChanged(specPath);
  let specInvalidated: string[] = [];
  if (primaryChanged || changedSpecs.length > 0) {
    specInvalidated = skipped;
    skipped = [];
  }

  // The diff: files whose content differs from the cache AND from the base (untracked ones as
  // new files), plus governed paths deleted since the base (Grove: NotarAI's `git diff <base> --
  // <files>` shows neither); minus exclude_patterns, minus binaries. As in NotarAI, every file
  // of `files` with a binary extension is in binary_changes, whether or not it differs from the
  // base or is excluded; other binaries are found among the files diffed (a NUL byte, or git's
  // "Binary files ... differ").
  const changedSet = new Set(changed.paths);
  const deleted = [...changed.gone]
    .filter((file) => !isSpecPath(file) && governs(spec, file))
    .sort(compareUtf8);
  const excludes = compileExcludePatterns(excludePatterns);
  const binaryChanges: string[] = await filterInSlices(filesOut, isBinaryByExtension, signal);
  const candidates = await filterInSlices(
    filesOut,
    (file) => changedSet.has(file) && !isBinaryByExtension(file) && !excludes.test(file),
    signal,
  );
  const textPaths: string[] = [];
  const sniffed = await mapLimit(
    candidates,
    FILE_CONCURRENCY,
    async (file) => hasNulByte(context.root, file),
    signal,
  );
  candidates.forEach((file, index) => (sniffed[index] ? binaryChanges : textPaths).push(file));
  for (const file of deleted) {
    if (excludes.test(file)) continue;
    (isBinaryByExtension(file) ? binaryChanges : textPaths).push(file);
  }
  lap('intersect+sniff');
  const dirs = await context.gitDirectories();
  const rawDiff = await diffPathsAgainstBase(context.root, sha, {
    paths: textPaths,
    deleted: new Set(deleted),
    objectsDir: path.join(dirs.commonDir, 'objects'),
    ...(signal ? { signal } : {}),
  });
  // Without git's final newline, as NotarAI returns it (it joins git's lines with "\n").
  const diff = withoutFinalNewline(stripBinaryNotices(rawDiff, binaryChanges));
  lap('diff');

  // Spec text through the confined layer: a spec that leads outside the worktree, or is a FIFO,
  // a device or oversized, gives empty content and a warning naming it, never its bytes.
  const unreadable: string[] = [];
  const specText = async (file: string): Promise<string> =>
    readSpecText(context.root, file).catch((error: unknown) => {
      unreadable.push(`cannot read spec ${file}: ${(error as Error).message}`);
      return '';
    });
  const spec_changes = await Promise.all(
    changedSpecs.map(async (file) => ({ path: file, content: await specText(file) })),
  );
  let system_spec: SpecDiffResult['system_spec'] = null;
  if (spec_changes.length > 0 && specs.systemSpec) {
    const systemPath = specs.systemSpec;
    system_spec = changedSpecs.includes(systemPath)
      ? { path: systemPath }
      : { path: systemPath, content: await specText(systemPath) };
  }
  const file_categories: Record<string, string> = {};
  await forEachInSlices(
    filesOut,
    (file) => {
      const category = categoryOf(spec, file);
      if (category !== null) file_categories[file] = category;
    },
    signal,
  );
  await context.cache.recordStats(classification.stats);
  const review =
    request.review === true
      ? await reviewOf(
          { specPath, specs: specs.valid, changed, reconciled },
          [...filesOut, ...changedSpecs],
          deleted,
          signal,
        )
      : undefined;
  lap('specs+record');
  return {
    result: {
      diff,
      files: filesOut,
      skipped,
      excluded: excludePatterns,
      spec_changes,
      system_spec,
      binary_changes: sortedUtf8(new Set(binaryChanges)),
      file_categories,
      spec_invalidated: specInvalidated,
      deleted_files: deleted,
      ...(review ? { review } : {}),
    },
    warnings: [
      ...spec.warnings.map(formatSpecError),
      ...unreadable,
      ...(committed.warning ? [committed.warning] : []),
    ],
  };
}

/** A file's status vs the base, from git's letter (`?`: untracked); absent: same as the base. */
const STATUS_OF_LETTER: Readonly<Record<string, FileReviewStatus>> = {
  A: 'added',
  C: 'added',
  D: 'deleted',
  M: 'modified',
  T: 'modified',
  U: 'modified',
  X: 'modified',
  R: 'renamed',
  '?': 'untracked',
};

/**
 * get_spec_diff's `review` (Grove): each listed file's status vs the base (renames with their old
 * path), the listed files never reconciled (no row in what counts as reconciled), and the other
 * specs governing each listed file (a mark reconciles the file for them too).
 */
async function reviewOf(
  context: {
    specPath: string;
    specs: readonly ValidSpec[];
    changed: ChangedVsBase;
    reconciled: ReadonlyMap<string, ReconciledRow>;
  },
  listed: readonly string[],
  deleted: readonly string[],
  signal: AbortSignal | undefined,
): Promise<SpecReview> {
  const entries = new Map<string, ChangedEntry>();
  await forEachInSlices(context.changed.entries, (entry) => entries.set(entry.path, entry), signal);
  const status: SpecReview['status'] = {};
  const renamedFrom: Record<string, string> = {};
  const never: string[] = [];
  const others: Record<string, string[]> = {};
  const otherSpecs = context.specs.filter((spec) => spec.path !== context.specPath);
  await forEachInSlices(
    listed,
    (file) => {
      const entry = entries.get(file);
      status[file] = entry ? (STATUS_OF_LETTER[entry.status] ?? 'modified') : 'unchanged';
      if (entry?.status === 'R' && entry.from !== undefined) renamedFrom[file] = entry.from;
      if (!context.reconciled.has(file)) never.push(file);
      const governing = otherSpecs.filter((spec) => governs(spec, file)).map((spec) => spec.path);
      if (governing.length > 0) others[file] = governing;
    },
    signal,
  );
  // A path renamed away shows as its rename, not as a deletion.
  const renamedAway = new Set(Object.values(renamedFrom));
  for (const file of deleted) if (!renamedAway.has(file)) status[file] = 'deleted';
  return {
    status,
    renamed_from: renamedFrom,
    never_reconciled: never.sort(compareUtf8),
    other_specs: others,
  };
}

/** Calls `done` with the time since the previous lap (or the start) under each name. */
function lapTimer(done: (timings: Record<string, number>) => void): (name: string) => void {
  const timings: Record<string, number> = {};
  let last = performance.now();
  return (name) => {
    const now = performance.now();
    timings[name] = (timings[name] ?? 0) + (now - last);
    last = now;
    done(timings);
  };
}

/** `text` without one final "\n" (git ends a diff with one; NotarAI's text does not). */
function withoutFinalNewline(text: string): string {
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** Drops git's "Binary files a/x and b/x differ" lines, adding those paths to `binaries`. */
function stripBinaryNotices(diff: string, binaries: string[]): string {
  if (!diff.includes('Binary files ')) return diff;
  const kept: string[] = [];
  for (const line of diff.split('\n')) {
    const match = /^Binary files (?:a\/(.*)|\/dev\/null) and (?:b\/(.*)|\/dev\/null) differ$/.exec(
      line,
    );
    if (match) {
      const file = match[2] ?? match[1];
      if (file !== undefined) binaries.push(file);
      continue;
    }
    kept.push(line);
  }
  return kept.join('\n');
}
