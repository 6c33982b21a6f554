// The window reads tool results with the tools' own result schemas (shared/reconcile-results.ts):
// what the server sends is typed as the server defines it, and a result of another shape is a
// clear error instead of a half-filled view. (The real round trip is in e2e/reconcile.spec.ts.)
import { describe, expect, it } from 'vitest';
import type { HostCommandMethods } from '../../../shared/host-api.ts';
import { markReconciled, snapshotState } from './reconcile-calls.ts';

type CallTool = HostCommandMethods['callTool'];
const answering = (structuredContent: Record<string, unknown>, isError = false) => ({
  callTool: (async () => ({
    content: [{ type: 'text', text: isError ? 'mark_reconciled: the cache is locked' : '{}' }],
    structuredContent,
    isError,
  })) as unknown as CallTool,
});

describe('reconciliation calls from the window', () => {
  it('return the tool result as the tool defines it', async () => {
    const result = await markReconciled(
      answering({ updated: 2, rejected: [{ path: '../x', reason: 'outside the worktree' }] }),
      'w1',
      ['a', '../x'],
    );
    expect(result).toEqual({
      updated: 2,
      rejected: [{ path: '../x', reason: 'outside the worktree' }],
    });
  });

  it('refuse a result of another shape with an error naming the tool', async () => {
    await expect(
      snapshotState(answering({ files: 'three', specs: 1, git_hash: 'abc' }), 'w1', {
        keepCommitted: true,
        dryRun: true,
      }),
    ).rejects.toThrow(/^snapshot_state answered with an unexpected result: /);
  });

  it("throw the tool's own words when the call failed", async () => {
    await expect(markReconciled(answering({}, true), 'w1', ['a'])).rejects.toThrow(
      'mark_reconciled: the cache is locked',
    );
  });
});
