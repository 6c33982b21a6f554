// The reconciliation tools the Reconciliation tab calls through the host's tool console
// (callTool): get_spec_diff, mark_reconciled, clear_cache, snapshot_state. Each helper returns the
// tool's structured result, or throws with the tool's own error text when the call failed.
import type { HostCommandMethods } from '../../../shared/host-api.ts';

export interface SpecDiff {
  diff: string;
  files: string[];
  skipped: string[];
  specInvalidated: string[];
  binaryChanges: string[];
  deletedFiles: string[];
  warnings: string[];
}

export interface MarkResult {
  updated: number;
  rejected: { path: string; reason: string }[];
}

export interface SnapshotResult {
  files: number;
  specs: number;
  gitHash: string;
  statePath: string;
}

type Commands = Pick<HostCommandMethods, 'callTool'>;

async function call(
  commands: Commands,
  worktreeId: string,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const result = await commands.callTool({ worktreeId, name, arguments: args });
  if (result.isError) {
    const text = result.content
      .map((block) => (typeof block['text'] === 'string' ? block['text'] : ''))
      .join('\n')
      .trim();
    throw new Error(text || `${name} failed`);
  }
  return result.structuredContent ?? {};
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

export async function getSpecDiff(
  commands: Commands,
  worktreeId: string,
  specPath: string,
  base: string,
): Promise<SpecDiff> {
  const out = await call(commands, worktreeId, 'get_spec_diff', {
    spec_path: specPath,
    base_branch: base,
  });
  return {
    diff: typeof out['diff'] === 'string' ? out['diff'] : '',
    files: strings(out['files']),
    skipped: strings(out['skipped']),
    specInvalidated: strings(out['spec_invalidated']),
    binaryChanges: strings(out['binary_changes']),
    deletedFiles: strings(out['deleted_files']),
    warnings: strings(out['warnings']),
  };
}

export async function markReconciled(
  commands: Commands,
  worktreeId: string,
  files: readonly string[],
): Promise<MarkResult> {
  const out = await call(commands, worktreeId, 'mark_reconciled', { files: [...files] });
  const rejected = Array.isArray(out['rejected'])
    ? (out['rejected'] as { path?: unknown; reason?: unknown }[]).map((item) => ({
        path: String(item.path ?? ''),
        reason: String(item.reason ?? ''),
      }))
    : [];
  return { updated: Number(out['updated'] ?? 0), rejected };
}

export async function clearCache(commands: Commands, worktreeId: string): Promise<boolean> {
  const out = await call(commands, worktreeId, 'clear_cache', {});
  return out['cleared'] === true;
}

export async function snapshotState(
  commands: Commands,
  worktreeId: string,
): Promise<SnapshotResult> {
  const out = await call(commands, worktreeId, 'snapshot_state', {});
  return {
    files: Number(out['files'] ?? 0),
    specs: Number(out['specs'] ?? 0),
    gitHash: String(out['git_hash'] ?? ''),
    statePath: String(out['state_path'] ?? ''),
  };
}
