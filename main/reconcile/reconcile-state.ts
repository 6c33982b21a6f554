// The ReconcileState the window shows for one worktree: every valid spec with its governed files,
// what changed since it was reconciled (from the hash cache, or the committed snapshot where the
// cache has no row) and what changed vs the base, plus totals, spec errors and warnings.
import path from 'node:path';
import type { DecisionsSummary } from '../../shared/decisions.ts';
import type { ReconcileState, SpecReconcileState } from '../../shared/reconcile.ts';
import { RECONCILE_PATHS_CAP } from '../../shared/reconcile.ts';
import { compareUtf8 } from '../platform/path-order.ts';
import { filterInSlices, forEachInSlices } from '../platform/time-slices.ts';
import { listingAndSpecs } from './live-index.ts';
import { readDecisionLogForState } from './notarai-configs.ts';
import { classifyAgainstCache, type Classification, type EngineParts } from './classify.ts';
import {
  changedVsBase,
  resolveBase,
  withUntracked,
  type ChangedEntry,
  type ChangedVsBase,
} from './git-queries.ts';
import type { ReconciledRow } from './hash-cache.ts';
import { formatSpecError, governs, isSpecPath } from './spec-loader.ts';
import type { SpecSet, ValidSpec } from './spec-loader.ts';
import { readCommittedSnapshot, withSnapshot } from './state-file.ts';

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
  const [files, specs] = await listingAndSpecs(parts.root, known, signal);
  // Each spec's governed files, matched once per listing (the live index keeps them). Loops over
  // every listed or governed file run in slices (platform/time-slices.ts).
  const governedListed = new Map<string, string[]>();
  const listed = new Set<string>();
  for (const spec of specs.valid) {
    const governed =
      known?.governed.get(spec.path) ??
      (await filterInSlices(files.present, (file) => governs(spec, file), signal));
    governedListed.set(spec.path, governed);
    await forEachInSlices(governed, (file) => listed.add(file), signal);
  }
  // The window's view: what the hash cache says was reconciled, and, for what it has no row
  // for, the committed snapshot (a fresh clone has only that).
  const committed = await readCommittedSnapshot(parts.root);
  const cacheRows = await parts.cache.readReconciled();
  const reconciled = withSnapshot(cacheRows, committed.snapshot);
  const classification = await classifyAgainstCache(
    parts,
    [...listed, ...specs.valid.map((spec) => spec.path)],
    reconciled,
    signal,
    known?.hashes,
  );
  let changed: ChangedVsBase | null = null;
  try {
    const tracked = await trackedPromise;
    if (tracked) changed = withUntracked(tracked, files.untracked);
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
  const gone = changed?.gone ?? new Set<string>();
  const governedBySpec = new Map<string, string[]>();
  const governedUnion = new Set<string>();
  for (const spec of specs.valid) {
    const governed = await filterInSlices(
      governedListed.get(spec.path) ?? [],
      (file) => !gone.has(file) && !classification.missing.has(file),
      signal,
    );
    governed.sort(compareUtf8); // the listing's order already: git lists paths sorted
    governedBySpec.set(spec.path, governed);
    await forEachInSlices(governed, (file) => governedUnion.add(file), signal);
  }
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
        signal,
      ),
    );
  }
  const governedTotal = [...governedUnion];
  const changedTotal = await filterInSlices(
    governedTotal,
    (file) => classification.changed.has(file),
    signal,
  );
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
      governedFiles: governedTotal.length,
      changedSinceReconciled: changedTotal.length,
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
  classification: Classification,
  reconciled: ReadonlyMap<string, ReconciledRow>,
  cacheRows: ReadonlyMap<string, ReconciledRow>,
  changed: ChangedVsBase | null,
  signal: AbortSignal | undefined,
): Promise<SpecReconcileState> {
  const changedFiles = (
    await filterInSlices(governed, (file) => classification.changed.has(file), signal)
  ).sort(compareUtf8);
  const affected = changed
    ? await filterInSlices(changed.paths, (file) => governs(spec, file), signal)
    : [];
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
