// NotarAI 0.7's `score`: each spec's drift score from files changed since reconciliation, days
// since the last reconciliation, proposed decisions, orphaned globs, open questions and unspecced
// files, weighted by .notarai/scoring.yaml (the formula, statuses and rounding are NotarAI's; the
// days come from `last_reconciliation.timestamp`, which NotarAI writes and never reads:
// docs/notarai-compatibility.md).
import type { DriftReport, DriftStatus, SpecDriftScore } from '../../../shared/notarai-check.ts';
import { shortArgument } from '../../platform/confined-fs.ts';
import { UserError } from '../../platform/errors.ts';
import { compareUtf8 } from '../../platform/path-order.ts';
import { forEachInSlices } from '../../platform/time-slices.ts';
import { type EngineParts } from '../floor/classify.ts';
import { loadDecisionLog, loadScoringConfig } from './notarai-configs.ts';
import { todayDays } from './notarai-lint.ts';
import { artifactEntryCount, unreadableSpecs } from './notarai-specs.ts';
import { readCommittedSnapshot } from '../floor/state-file.ts';
import { changedAmong } from '../floor/classification-memo.ts';
import {
  gatherInputs,
  isInternal,
  withCacheWarnings,
  withStandalone,
  type NotaraiInputs,
} from './notarai-inputs.ts';

/** Days used when no reconciliation was recorded (NotarAI's default). */
export const DEFAULT_DAYS_SINCE_RECONCILIATION = 30;

/** `withSnapshot`: Grove's rule for "changed since reconciled" (notarai-check.ts CheckOptions). */
export interface ScoreOptions {
  specPath?: string;
  withSnapshot?: boolean;
}

const status = (score: number): DriftStatus =>
  score < 0.3 ? 'healthy' : score < 0.6 ? 'review' : 'overdue';
const round2 = (value: number) => Math.round(value * 100) / 100;
const folderOf = (file: string) => {
  const slash = file.lastIndexOf('/');
  return slash < 0 ? null : file.slice(0, slash);
};

/** The unspecced term's counts: ungoverned files per folder, each spec's folders, its sum. */
interface Unspecced {
  byFolder: Map<string, number>;
  folders: Map<string, Set<string>>;
  bySpec: Map<string, number>;
}

const unspeccedFile = (inputs: NotaraiInputs, file: string) =>
  !isInternal(file) && !inputs.governedAll.has(file) && !inputs.exclude.test(file);

/** Per spec: the ungoverned, non-excluded files in the folders of the files it governs. */
async function unspeccedBySpec(
  inputs: NotaraiInputs,
  signal: AbortSignal | undefined,
): Promise<Unspecced> {
  const byFolder = new Map<string, number>();
  await forEachInSlices(
    inputs.listing.present,
    (file) => {
      if (!unspeccedFile(inputs, file)) return;
      const folder = folderOf(file);
      if (folder !== null) byFolder.set(folder, (byFolder.get(folder) ?? 0) + 1);
    },
    signal,
  );
  const folders = new Map<string, Set<string>>();
  for (const spec of inputs.specs) {
    const specFolders = new Set<string>();
    // Governed files come in git's order, a folder's files together: a file in the folder just
    // added adds nothing, and is told without cutting its folder's name out (20,000 strings).
    let last = '';
    await forEachInSlices(
      inputs.governed.get(spec.path) ?? [],
      (file) => {
        const slash = file.lastIndexOf('/');
        if (slash < 0 || (slash === last.length && file.startsWith(last))) return;
        last = file.slice(0, slash);
        specFolders.add(last);
      },
      signal,
    );
    folders.set(spec.path, specFolders);
  }
  return { byFolder, folders, bySpec: sums(byFolder, folders) };
}

/** The counts after ungoverned files were added or removed (the governed sets are the same). */
function unspeccedUpdated(
  inputs: NotaraiInputs,
  before: Unspecced,
  added: readonly string[],
  removed: readonly string[],
): Unspecced {
  const byFolder = new Map(before.byFolder);
  const move = (file: string, by: number) => {
    const folder = folderOf(file);
    if (folder === null || !unspeccedFile(inputs, file)) return;
    const count = (byFolder.get(folder) ?? 0) + by;
    if (count === 0) byFolder.delete(folder);
    else byFolder.set(folder, count);
  };
  for (const file of removed) move(file, -1);
  for (const file of added) move(file, 1);
  return { byFolder, folders: before.folders, bySpec: sums(byFolder, before.folders) };
}

function sums(
  byFolder: ReadonlyMap<string, number>,
  folders: ReadonlyMap<string, ReadonlySet<string>>,
): Map<string, number> {
  const bySpec = new Map<string, number>();
  for (const [spec, specFolders] of folders) {
    let unspecced = 0;
    for (const folder of specFolders) unspecced += byFolder.get(folder) ?? 0;
    bySpec.set(spec, unspecced);
  }
  return bySpec;
}

/** `score` with an engine's parts. */
export async function scoreSpecsWithParts(
  parts: EngineParts,
  options: ScoreOptions & { signal?: AbortSignal; inputs?: NotaraiInputs } = {},
): Promise<DriftReport> {
  const { signal } = options;
  const warnings: string[] = [];
  const inputs =
    options.inputs ??
    (await gatherInputs(parts, {
      sync: true,
      withSnapshot: options.withSnapshot ?? false,
      ...(signal ? { signal } : {}),
    }));
  const weights = await loadScoringConfig(parts.root, warnings);
  const proposals = await loadDecisionLog(parts.root, warnings);
  const committed = await (parts.memo?.committed(parts.root) ?? readCommittedSnapshot(parts.root));
  if (committed.warning) warnings.push(committed.warning);
  const at = committed.snapshot?.at;
  const days =
    at === null || at === undefined
      ? DEFAULT_DAYS_SINCE_RECONCILIATION
      : Math.max(0, todayDays(parts.now()) - Math.floor(at / 86_400_000));
  const scored = inputs.specs.filter(
    (spec) =>
      spec.errors.length === 0 &&
      (options.specPath === undefined || spec.path === options.specPath),
  );
  if (options.specPath !== undefined && scored.length === 0) {
    throw new UserError(`no spec at ${shortArgument(options.specPath)} (or it does not parse)`);
  }
  // Ungoverned, non-excluded project files in the folders of each spec's files (the unspecced
  // term): kept with the inputs' layout, which an edit does not move.
  const unspeccedOf = (
    parts.memo
      ? await parts.memo.keepAlongListing(
          parts,
          'unspecced',
          [inputs.governedAll],
          inputs.listing,
          inputs.generation,
          () => unspeccedBySpec(inputs, signal),
          async (before, added, removed) => unspeccedUpdated(inputs, before, added, removed),
        )
      : await unspeccedBySpec(inputs, signal)
  ).bySpec;
  const specs: SpecDriftScore[] = [];
  const raw: number[] = [];
  for (const spec of scored) {
    const governed = inputs.governed.get(spec.path) ?? [];
    const total = Math.max(1, governed.length);
    const changedCount = inputs.changed
      ? (await changedAmong(governed, inputs.changed, signal)).length
      : 0;
    const unspecced = unspeccedOf.get(spec.path) ?? 0;
    const questions = spec.value['open_questions'];
    const terms = {
      files_changed: inputs.changed ? Math.min(1, changedCount / total) : 1,
      days_since_reconciliation: Math.min(1, days / 90),
      unresolved_decisions: Math.min(
        1,
        proposals.filter((p) => p.spec_path === spec.path && p.status === 'proposed').length / 5,
      ),
      orphaned_globs: Math.min(
        1,
        (inputs.orphaned.get(spec.path)?.length ?? 0) / Math.max(1, artifactEntryCount(spec.value)),
      ),
      open_questions: Math.min(1, (Array.isArray(questions) ? questions.length : 0) / 5),
      unspecced_files: Math.min(1, unspecced / total),
    };
    const score = Math.min(
      1,
      weights.files_changed * terms.files_changed +
        weights.days_since_reconciliation * terms.days_since_reconciliation +
        weights.unresolved_decisions * terms.unresolved_decisions +
        weights.orphaned_globs * terms.orphaned_globs +
        weights.open_questions * terms.open_questions +
        weights.unspecced_files * terms.unspecced_files,
    );
    raw.push(score);
    specs.push({ spec_path: spec.path, score, status: status(score), terms });
  }
  specs.sort((a, b) => b.score - a.score || compareUtf8(a.spec_path, b.spec_path));
  const overall = raw.length === 0 ? 0 : raw.reduce((sum, value) => sum + value, 0) / raw.length;
  return {
    overall: { score: round2(overall), status: status(overall) },
    specs: specs.map((spec) => ({ ...spec, score: round2(spec.score) })),
    weights: { ...weights },
    days_since_reconciliation: days,
    warnings,
    // With spec_path, the one spec parsed (or the call failed above): the others do not matter.
    unreadable_specs: options.specPath === undefined ? unreadableSpecs(inputs.specs) : [],
  };
}

/** NotarAI's `score` for the worktree at `root` (see the header). */
export function scoreSpecs(root: string, options: ScoreOptions = {}): Promise<DriftReport> {
  return withStandalone(root, async (parts) =>
    withCacheWarnings(parts, await scoreSpecsWithParts(parts, options)),
  );
}
