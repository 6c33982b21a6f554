// The ReconcileState the window shows for one worktree: every valid spec with its governed files,
// what changed since it was reconciled (from the hash cache, or the committed snapshot where the
// cache has no row) and what changed vs the base, plus totals, spec errors and warnings.
import path from 'node:path';
import type { DecisionsSummary } from '../../shared/decisions.ts';
import type { ReconcileState, SpecReconcileState } from '../../shared/reconcile.ts';
import { RECONCILE_PATHS_CAP } from '../../shared/reconcile.ts';
import { compareUtf8 } from '../platform/path-order.ts';
import { filterInSlices, forEachInSlices } from '../platform/time-slices.ts';
import { listingAndSpecs, type ScanSnapshot } from './floor/live-index.ts';
import { readDecisionLogForState } from './notarai07/notarai-configs.ts';
import { classifyAgainstCache, type EngineParts } from './floor/classify.ts';
import {
  changedAmong,
  type ClassificationMemo,
  type PathClasses,
} from './floor/classification-memo.ts';
import {
  changedVsBase,
  resolveBase,
  withUntracked,
  type ChangedEntry,
  type ChangedVsBase,
  type WorktreeFiles,
} from './floor/git-queries.ts';
import type { ReconciledRow } from './floor/hash-cache.ts';
import { formatSpecError, governs, isSpecPath } from './specs/spec-loader.ts';
import type { SpecSet, ValidSpec } from './specs/spec-loader.ts';
import { readCommittedSnapshot, withSnapshot } from './floor/state-file.ts';

/** Computes the ReconcileState against `base` (errors about the base go in `baseError`). */
export async function computeReconcileState(
  parts: EngineParts,
  base: string,
  signal?: AbortSignal,
): Promise<ReconcileState> {
  const started = performance.now();
  // The window's state is recomputed after each change the watcher reports, in the background of
  // the tool calls: what the live index still vouches for is not scanned again (the paths that
  // moved are applied to it first). No sync: a change still on its way is reported soon and
  // recomputes the state again.
  const sequence = await parts.index?.settled();
  const known = parts.index?.snapshot(sequence);
  let baseError: string | null = null;
  let trackedPromise: Promise<ChangedEntry[] | null>;
  let sha: string | undefined;
  try {
    sha = known?.bases.get(base) ?? (await resolveBase(parts.root, base));
    const knownChanges = known?.changed.get(sha);
    trackedPromise = knownChanges
      ? Promise.resolve(knownChanges)
      : changedVsBase(parts.root, sha, signal);
  } catch (error) {
    baseError = error instanceof Error ? error.message : String(error);
    trackedPromise = Promise.resolve(null);
  }
  trackedPromise.catch(() => undefined);
  const generation = known ? parts.index?.generation : undefined;
  const memo = known ? parts.memo : undefined;
  const [files, specs] = await listingAndSpecs(parts.root, known, signal);
  // Each spec's governed files, matched once per listing (the live index keeps them, and while it
  // keeps the same listing, specs and governed sets, what derives from them is kept too).
  const governedKnown = specs.valid.map((spec) => known?.governed.get(spec.path));
  // (The listing matters only for a spec the index keeps no governed set for.)
  const matched = governedKnown.some((governed) => governed === undefined);
  const layout = memo
    ? await memo.keep('state-layout', [matched ? files : undefined, specs, ...governedKnown], () =>
        stateLayout(files, specs, known, signal),
      )
    : await stateLayout(files, specs, known, signal);
  const { governedListed, listed } = layout;
  // The window's view: what the hash cache says was reconciled, and, for what it has no row
  // for, the committed snapshot (a fresh clone has only that).
  const committed = await (parts.memo?.committed(parts.root) ?? readCommittedSnapshot(parts.root));
  const cacheRows = await parts.cache.readReconciled();
  const version = parts.cache.reconciledVersion; // (after the rows: see notarai-inputs.ts)
  const reconciled = parts.memo
    ? parts.memo.merged(cacheRows, version, committed.snapshot)
    : withSnapshot(cacheRows, committed.snapshot);
  const classification = parts.memo
    ? await parts.memo.classify(parts, layout.paths, reconciled, version, known, generation, signal)
    : await classifyAgainstCache(parts, [...layout.paths], reconciled, signal);
  let changed: ChangedVsBase | null = null;
  try {
    let tracked = await trackedPromise;
    if (tracked && memo && sha !== undefined) {
      // The same changes as last time (an edit of a file already changed): the same list, so
      // what was matched against it is kept.
      tracked = memo.same(`tracked-${sha}`, tracked, sameEntries);
    }
    if (tracked) {
      const listedTracked = tracked;
      changed = memo
        ? await memo.keep('vs-base', [tracked, files.untracked], async () =>
            withUntracked(listedTracked, files.untracked),
          )
        : withUntracked(tracked, files.untracked);
    }
    parts.index?.record(sequence, (snapshot) => {
      if (sha !== undefined && tracked) {
        snapshot.bases.set(base, sha);
        snapshot.changed.set(sha, tracked);
      }
      snapshot.listing = files;
      snapshot.specs = specs;
      for (const [spec, governed] of governedListed) snapshot.governed.set(spec, governed);
    });
    await parts.index?.recordHashes(sequence, classification.hashes, classification.read);
  } catch (error) {
    baseError = error instanceof Error ? error.message : String(error);
  }
  // Governed files that are gone (deleted vs the base, or no longer readable) are not counted.
  const gone = changed?.gone ?? new Set<string>();
  const away: string[] = [];
  for (const file of gone) if (listed.has(file)) away.push(file);
  for (const file of classification.missing)
    if (listed.has(file) && !gone.has(file)) away.push(file);
  away.sort(compareUtf8);
  const awayKey = away.join('\0');
  const counted = memo
    ? await memo.keep('state-counted', [layout, awayKey], () =>
        countedLayout(specs, governedListed, new Set(away), signal),
      )
    : await countedLayout(specs, governedListed, new Set(away), signal);
  const { governedBySpec, governedUnion } = counted;
  await parts.cache.recordStats(classification.stats);
  const states: SpecReconcileState[] = [];
  for (const spec of specs.valid) {
    states.push(
      await specState(
        spec,
        specs,
        governedBySpec.get(spec.path) ?? [],
        classification,
        reconciled,
        cacheRows,
        changed,
        memo,
        signal,
      ),
    );
  }
  let changedTotal = 0;
  for (const file of classification.changed) if (governedUnion.has(file)) changedTotal++;
  return {
    base,
    baseError,
    computedAt: parts.now(),
    durationMs: Math.max(0, performance.now() - started),
    systemSpec: specs.systemSpec,
    snapshot: committed.snapshot
      ? {
          at: committed.snapshot.at,
          gitHash: committed.snapshot.gitHash,
          branch: committed.snapshot.branch,
        }
      : null,
    specs: states,
    totals: {
      specs: specs.valid.length,
      invalidSpecs: specs.all.length - specs.valid.length,
      affectedSpecs: states.filter((state) => state.affected).length,
      specsNeedingReconciliation: states.filter((state) => state.changedSinceReconciled > 0).length,
      governedFiles: governedUnion.size,
      changedSinceReconciled: changedTotal,
      changedVsBase: changed?.paths.length ?? 0,
    },
    specErrors: specs.errors,
    warnings: [
      ...parts.cache.takeWarnings(),
      ...specs.warnings.map(formatSpecError),
      ...(committed.warning ? [committed.warning] : []),
    ],
  };
}

/** Each spec's listed governed files, and every path the window classifies. */
interface StateLayout {
  governedListed: Map<string, string[]>;
  /** Every listed governed file. */
  listed: Set<string>;
  /** `listed` and every valid spec's own file. */
  paths: Set<string>;
}

async function stateLayout(
  files: WorktreeFiles,
  specs: SpecSet,
  known: ScanSnapshot | undefined,
  signal: AbortSignal | undefined,
): Promise<StateLayout> {
  // Loops over every listed or governed file run in slices (platform/time-slices.ts).
  const governedListed = new Map<string, string[]>();
  const listed = new Set<string>();
  for (const spec of specs.valid) {
    const governed =
      known?.governed.get(spec.path) ??
      (await filterInSlices(files.present, (file) => governs(spec, file), signal));
    governedListed.set(spec.path, governed);
    await forEachInSlices(governed, (file) => listed.add(file), signal);
  }
  const paths = new Set(listed);
  for (const spec of specs.valid) paths.add(spec.path);
  return { governedListed, listed, paths };
}

/** Each spec's governed files that count (not in `away`), in UTF-8 order, and their union. */
async function countedLayout(
  specs: SpecSet,
  governedListed: ReadonlyMap<string, string[]>,
  away: ReadonlySet<string>,
  signal: AbortSignal | undefined,
): Promise<{ governedBySpec: Map<string, string[]>; governedUnion: Set<string> }> {
  const governedBySpec = new Map<string, string[]>();
  const governedUnion = new Set<string>();
  for (const spec of specs.valid) {
    const listedFiles = governedListed.get(spec.path) ?? [];
    const governed =
      away.size === 0
        ? listedFiles.slice()
        : await filterInSlices(listedFiles, (file) => !away.has(file), signal);
    governed.sort(compareUtf8); // the listing's order already: git lists paths sorted
    governedBySpec.set(spec.path, governed);
    await forEachInSlices(governed, (file) => governedUnion.add(file), signal);
  }
  return { governedBySpec, governedUnion };
}

/** The same tracked changes, entry for entry. */
function sameEntries(a: readonly ChangedEntry[], b: readonly ChangedEntry[]): boolean {
  return (
    a.length === b.length &&
    a.every((entry, at) => {
      const other = b[at] as ChangedEntry;
      return (
        entry.status === other.status && entry.path === other.path && entry.from === other.from
      );
    })
  );
}

/** A `$ref` (relative to the spec file) as a POSIX path relative to the worktree root. */
function resolveSpecRef(specPath: string, ref: string): string {
  return path.posix.normalize(path.posix.join(path.posix.dirname(specPath), ref));
}

function firstLine(intent: string): string {
  const line =
    intent
      .split('\n')
      .find((text) => text.trim() !== '')
      ?.trim() ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

async function specState(
  spec: ValidSpec,
  specs: SpecSet,
  governed: readonly string[],
  classification: PathClasses,
  reconciled: ReadonlyMap<string, ReconciledRow>,
  cacheRows: ReadonlyMap<string, ReconciledRow>,
  changed: ChangedVsBase | null,
  memo: ClassificationMemo | undefined,
  signal: AbortSignal | undefined,
): Promise<SpecReconcileState> {
  const changedFiles = await changedAmong(governed, classification.changed, signal);
  const matchAffected = async () =>
    changed ? await filterInSlices(changed.paths, (file) => governs(spec, file), signal) : [];
  // Kept per spec while the changes vs the base are the same (one map for them all: bounded by
  // the specs there are now).
  const kept = memo
    ? await memo.keep('affected', [changed], async () => new Map<ValidSpec, string[]>())
    : undefined;
  let affected = kept?.get(spec);
  if (!affected) {
    affected = await matchAffected();
    kept?.set(spec, affected);
  }
  // A spec was reconciled when its own file was marked (the reconcile prompt marks the spec with
  // the files reviewed): another spec marking a shared file does not make this one reconciled.
  const own = reconciled.get(spec.path);
  const last = own ? own.updatedAt * 1000 : null;
  const reconciledBy = own ? (cacheRows.has(spec.path) ? 'cache' : 'snapshot') : null;
  const specInvalidated =
    classification.changed.has(spec.path) || changedFiles.some((file) => isSpecPath(file));
  return {
    path: spec.path,
    driftReason: driftReason(changedFiles, classification.changed.has(spec.path), (file) =>
      cacheRows.has(file) ? 'cache' : reconciled.has(file) ? 'snapshot' : 'never',
    ),
    title: firstLine(spec.spec.intent),
    intent: spec.spec.intent,
    behaviors: (spec.spec.behaviors ?? []).map(({ name, given, then }) => ({ name, given, then })),
    constraints: spec.spec.constraints ?? [],
    invariants: spec.spec.invariants ?? [],
    subsystems: (spec.spec.subsystems ?? []).map((ref) => resolveSpecRef(spec.path, ref.$ref)),
    tier: spec.spec.tier ?? 'full',
    isSystemSpec: specs.systemSpec === spec.path,
    governedFiles: governed.length,
    changedSinceReconciled: changedFiles.length,
    changedSinceReconciledPaths: changedFiles.slice(0, RECONCILE_PATHS_CAP),
    specInvalidated,
    affected: affected.length > 0,
    affectedFiles: affected.length,
    affectedPaths: affected.slice(0, RECONCILE_PATHS_CAP),
    lastReconciledAt: last,
    reconciledBy,
  };
}

/** How many file names a drift reason names per kind before "and N more". */
const REASON_NAMES = 3;

/**
 * One line on why a spec drifted, by where each changed file's reconciled state came from:
 * "2 files changed since the committed snapshot: Cargo.toml, README.md; spec edited". Null when
 * nothing changed.
 */
export function driftReason(
  changedFiles: readonly string[],
  specEdited: boolean,
  source: (file: string) => 'cache' | 'snapshot' | 'never',
): string | null {
  const groups = { never: [] as string[], cache: [] as string[], snapshot: [] as string[] };
  for (const file of changedFiles) groups[source(file)].push(file);
  const named = (files: string[]) => {
    const shown = files.slice(0, REASON_NAMES).join(', ');
    const more = files.length - REASON_NAMES;
    return more > 0 ? `${shown} and ${more.toLocaleString('en-US')} more` : shown;
  };
  const count = (files: string[]) =>
    `${files.length.toLocaleString('en-US')} ${files.length === 1 ? 'file' : 'files'}`;
  const parts: string[] = [];
  if (groups.never.length > 0)
    parts.push(`${count(groups.never)} never reconciled: ${named(groups.never)}`);
  if (groups.cache.length > 0) {
    parts.push(
      `${count(groups.cache)} changed since marked on this machine: ${named(groups.cache)}`,
    );
  }
  if (groups.snapshot.length > 0) {
    parts.push(
      `${count(groups.snapshot)} changed since the committed snapshot: ${named(groups.snapshot)}`,
    );
  }
  if (specEdited) parts.push('spec edited');
  return parts.length === 0 ? null : parts.join('; ');
}

/**
 * The state's decisions part: the proposals of .notarai/decision-log.json counted as `score`
 * counts them (its unresolved_decisions term), per spec, with a revision of the log's text so the
 * window lists them again when it changes (an agent's proposal, the CLI, an editor).
 */
export async function summarizeDecisions(root: string): Promise<DecisionsSummary> {
  const read = await readDecisionLogForState(root);
  const bySpec = new Map<string, number>();
  let proposed = 0;
  for (const proposal of read.proposals) {
    if (proposal.status !== 'proposed') continue;
    proposed++;
    bySpec.set(proposal.spec_path, (bySpec.get(proposal.spec_path) ?? 0) + 1);
  }
  return {
    total: read.proposals.length,
    proposed,
    bySpec: [...bySpec]
      .sort(([a], [b]) => compareUtf8(a, b))
      .map(([specPath, count]) => ({ specPath, proposed: count })),
    revision: read.revision,
    problem: read.problem,
  };
}
