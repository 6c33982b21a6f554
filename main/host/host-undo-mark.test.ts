// The window's Undo of a mark through the whole chain: the HostApi command undoMark (runHostCommand,
// as both transports call it) -> the supervisor -> the worktree process (`undo-mark`) -> its
// engine, after a mark_reconciled through the tool console, as the window makes it. A real host,
// a real worktree process, real SQLite: the cache's rows after the undo are those before the mark.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import type { ReconcileState } from '../../shared/reconcile.ts';
import { MarkReconciledResultSchema } from '../../shared/reconcile-results.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { createLogger } from '../platform/log.ts';
import { CACHE_DB } from '../reconcile/floor/hash-cache.ts';
import { Host } from './host.ts';
import { runHostCommand } from './host-commands.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function rows(root: string): unknown[] {
  const db = new Database(path.join(root, CACHE_DB), { readonly: true });
  try {
    return db.prepare('SELECT * FROM file_cache ORDER BY path').raw(true).all();
  } finally {
    db.close();
  }
}

it('undoMark restores the rows the last mark replaced, and refuses an older mark', async () => {
  const repo = await makeTempRepo({ 'src/a.ts': 'a\n', 'src/b.ts': 'b\n' });
  cleanups.push(repo.cleanup);
  const host = await Host.open({
    dataDir: await makeTempDir(),
    firstPort: randomFirstPort(),
    worktreePollMs: 0,
    log: createLogger([]),
  });
  cleanups.push(() => host.close());
  let state: ReconcileState | undefined;
  host.onEvent((event) => {
    if (event.type === 'reconcile-state') state = event.state;
  });
  const opened = await host.addRepo(repo.root);
  const worktreeId = opened.worktrees[0]!.id;
  await host.startAll();
  await waitFor(() => state !== undefined, 'the first reconcile-state', 30_000);

  const mark = async (files: string[]) => {
    const result = (await runHostCommand(host, 'callTool', {
      worktreeId,
      name: 'mark_reconciled',
      arguments: { files },
    })) as { structuredContent?: unknown };
    return MarkReconciledResultSchema.parse(result.structuredContent);
  };
  const first = await mark(['src/a.ts']);
  const before = rows(repo.root);
  const second = await mark(['src/a.ts', 'src/b.ts']);
  expect(rows(repo.root)).toHaveLength(2);

  await expect(
    runHostCommand(host, 'undoMark', { worktreeId, markId: first.mark_id }),
  ).rejects.toThrow(/only the last mark can be undone/);
  // Bad input is named by the command's schema.
  await expect(runHostCommand(host, 'undoMark', { worktreeId, markId: '' })).rejects.toThrow();

  const undone = await runHostCommand(host, 'undoMark', { worktreeId, markId: second.mark_id });
  expect(undone).toEqual({ restored: 1, deleted: 1 });
  expect(rows(repo.root)).toEqual(before);
});
