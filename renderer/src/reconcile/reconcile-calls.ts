// The reconciliation tools the Reconciliation tab calls through the host's tool console
// (callTool): get_spec_diff, get_drift_score, mark_reconciled, clear_cache, snapshot_state. Each helper returns the
// tool's structured result parsed with the tool's own result schema (shared/reconcile-results.ts,
// the one the server validates against), through common/tool-call.ts (the tool's own error text
// when the call failed, a clear error when the result is not what that schema says).
import {
  ClearCacheResultSchema,
  MarkReconciledResultSchema,
  SnapshotStateResultSchema,
  SpecDiffResultSchema,
  type MarkReconciledResult,
  type SnapshotStateResult,
  type SpecDiffResult,
  type UndoMarkResult,
} from '../../../shared/reconcile-results.ts';
import type { HostCommandMethods } from '../../../shared/host-api.ts';
import { DriftReportSchema, type DriftReport } from '../../../shared/notarai-check.ts';
import { callToolWithSchema as call, type ToolCommands as Commands } from '../common/tool-call.ts';

/**
 * get_spec_diff; `review`: with Grove's review details and the window's rule (the committed
 * snapshot counts where the cache has no row), so its files are the ones the state counts.
 */
export function getSpecDiff(
  commands: Commands,
  worktreeId: string,
  specPath: string,
  base: string,
  options: { review?: boolean } = {},
): Promise<SpecDiffResult> {
  const args = {
    spec_path: specPath,
    base_branch: base,
    ...(options.review ? { review: true, with_snapshot: true } : {}),
  };
  return call(commands, worktreeId, 'get_spec_diff', args, SpecDiffResultSchema);
}

/** get_drift_score of one spec, counted as the window counts (with_snapshot). */
export function getDriftScore(
  commands: Commands,
  worktreeId: string,
  specPath: string,
): Promise<DriftReport> {
  const args = { spec_path: specPath, with_snapshot: true };
  return call(commands, worktreeId, 'get_drift_score', args, DriftReportSchema);
}

export function markReconciled(
  commands: Commands,
  worktreeId: string,
  files: readonly string[],
): Promise<MarkReconciledResult> {
  const args = { files: [...files] };
  return call(commands, worktreeId, 'mark_reconciled', args, MarkReconciledResultSchema);
}

export async function clearCache(commands: Commands, worktreeId: string): Promise<boolean> {
  return (await call(commands, worktreeId, 'clear_cache', {}, ClearCacheResultSchema)).cleared;
}

/** snapshot_state with Grove's options: `dry_run` to ask first, `keep_committed` to keep them. */
export function snapshotState(
  commands: Commands,
  worktreeId: string,
  options: { keepCommitted: boolean; dryRun: boolean },
): Promise<SnapshotStateResult> {
  const args = { keep_committed: options.keepCommitted, dry_run: options.dryRun };
  return call(commands, worktreeId, 'snapshot_state', args, SnapshotStateResultSchema);
}

/** Undoes the worktree's last mark (`markId`, from mark_reconciled): the rows it replaced return. */
export function undoMark(
  commands: Pick<HostCommandMethods, 'undoMark'>,
  worktreeId: string,
  markId: string,
): Promise<UndoMarkResult> {
  return commands.undoMark({ worktreeId, markId });
}
