// The reconciliation tools the Reconciliation tab calls through the host's tool console
// (callTool): get_spec_diff, mark_reconciled, clear_cache, snapshot_state. Each helper returns the
// tool's structured result parsed with the tool's own result schema (shared/reconcile-results.ts,
// the one the server validates against), or throws with the tool's own error text when the call
// failed, or a clear error when the result is not what that schema says.
import type { z } from 'zod';
import type { HostCommandMethods } from '../../../shared/host-api.ts';
import {
  ClearCacheResultSchema,
  MarkReconciledResultSchema,
  SnapshotStateResultSchema,
  SpecDiffResultSchema,
  type MarkReconciledResult,
  type SnapshotStateResult,
  type SpecDiffResult,
} from '../../../shared/reconcile-results.ts';

type Commands = Pick<HostCommandMethods, 'callTool'>;

async function call<S extends z.ZodType>(
  commands: Commands,
  worktreeId: string,
  name: string,
  args: Record<string, unknown>,
  schema: S,
): Promise<z.infer<S>> {
  const result = await commands.callTool({ worktreeId, name, arguments: args });
  if (result.isError) {
    const text = result.content
      .map((block) => (typeof block['text'] === 'string' ? block['text'] : ''))
      .join('\n')
      .trim();
    throw new Error(text || `${name} failed`);
  }
  const parsed = schema.safeParse(result.structuredContent);
  if (!parsed.success) {
    throw new Error(
      `${name} answered with an unexpected result: ${parsed.error.issues[0]?.message}`,
    );
  }
  return parsed.data;
}

export function getSpecDiff(
  commands: Commands,
  worktreeId: string,
  specPath: string,
  base: string,
): Promise<SpecDiffResult> {
  const args = { spec_path: specPath, base_branch: base };
  return call(commands, worktreeId, 'get_spec_diff', args, SpecDiffResultSchema);
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
