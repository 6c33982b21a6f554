// The Activity tab across a restart of the host: the calls clients made are kept in the app
// database (the last `activityLimit` per worktree) and listed again after the host is opened
// anew — the last call before the stop included, even when it ended a few milliseconds before.
import { afterEach, describe, expect, it } from 'vitest';
import type { WorktreeState } from '../../shared/model.ts';
import { CLIENT_INFO, connectClient } from '../testing/mcp-clients.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { createLogger } from '../platform/log.ts';
import { Host } from './host.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openHost(dataDir: string, firstPort: number, activityLimit?: number) {
  const host = await Host.open({
    dataDir,
    firstPort,
    worktreePollMs: 0,
    log: createLogger([]),
    ...(activityLimit === undefined ? {} : { activityLimit }),
  });
  cleanups.push(() => host.close());
  await host.restoreRepos(); // the repositories opened before, as `grove serve` does
  return host;
}

function onlyWorktree(host: Host): WorktreeState {
  const [worktree] = host.snapshot().repos.flatMap((repo) => repo.worktrees);
  if (!worktree) throw new Error('expected one worktree');
  return worktree;
}

describe('activity across a host restart', () => {
  it('lists the calls made before the stop, the last one included', async () => {
    const repo = await makeTempRepo({ 'notes.txt': 'hello\n' });
    cleanups.push(repo.cleanup);
    const dataDir = await makeTempDir();
    const firstPort = randomFirstPort();

    const before = await openHost(dataDir, firstPort);
    await before.addRepo(repo.root);
    await before.startAll();
    const worktree = onlyWorktree(before);
    const { token } = before.getConnectionInfo(worktree.id);
    const { client } = await connectClient(worktree.port, 'legacy-http', token);
    await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    await client.callTool({ name: 'list_directory', arguments: { path: '.' } });
    // The last call: it has ended, and the host stops at once, well within the batching interval.
    await client.callTool({ name: 'get_file_info', arguments: { path: 'notes.txt' } });
    await client.close().catch(() => undefined);
    await before.close();

    const after = await openHost(dataDir, firstPort);
    const activity = after.snapshot().activity[onlyWorktree(after).id] ?? [];
    expect(activity.map((entry) => [entry.clientName, entry.tool, entry.ok])).toEqual([
      [CLIENT_INFO.name, 'read_file', true],
      [CLIENT_INFO.name, 'list_directory', true],
      [CLIENT_INFO.name, 'get_file_info', true],
    ]);
    expect(activity[0]!.argumentsSummary).toBe('{"path":"notes.txt"}');
  });

  it('keeps only the newest calls per worktree, and new calls follow the kept ones', async () => {
    const repo = await makeTempRepo({ 'notes.txt': 'hello\n' });
    cleanups.push(repo.cleanup);
    const dataDir = await makeTempDir();
    const firstPort = randomFirstPort();

    const before = await openHost(dataDir, firstPort, 3);
    await before.addRepo(repo.root);
    await before.startAll();
    const { id, port } = onlyWorktree(before);
    const first = await connectClient(port, 'sse', before.getConnectionInfo(id).token);
    for (let i = 0; i < 5; i++) {
      await first.client.callTool({ name: 'read_file', arguments: { path: `missing-${i}.txt` } });
    }
    await first.client.close();
    await before.close();

    const after = await openHost(dataDir, firstPort, 3);
    await after.startAll();
    const summaries = () =>
      (after.snapshot().activity[id] ?? []).map((entry) => entry.argumentsSummary);
    expect(summaries()).toEqual([
      '{"path":"missing-2.txt"}',
      '{"path":"missing-3.txt"}',
      '{"path":"missing-4.txt"}',
    ]);
    const second = await connectClient(port, 'sse', after.getConnectionInfo(id).token);
    cleanups.push(() => second.client.close());
    await second.client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    await waitFor(() => summaries().at(-1) === '{"path":"notes.txt"}', 'the new call', 5000);
    expect(summaries()).toEqual([
      '{"path":"missing-3.txt"}',
      '{"path":"missing-4.txt"}',
      '{"path":"notes.txt"}',
    ]);
    // The ids stay distinct across the two processes (the window keys its rows by them).
    const ids = (after.snapshot().activity[id] ?? []).map((entry) => entry.id);
    expect(new Set(ids).size).toBe(3);
  });
});
