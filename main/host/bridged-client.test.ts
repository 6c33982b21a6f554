// A stdio client that reaches the host through `grove bridge` (as Claude Desktop does), as the
// window lists it: stdio through the bridge, under the client's own name, in both protocol eras,
// its calls in the worktree's activity under that name.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClientInfo } from '../../shared/model.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { createLogger } from '../platform/log.ts';
import { Host } from './host.ts';

const GROVE = fileURLToPath(new URL('../../bin/grove.js', import.meta.url));

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a client through grove bridge', () => {
  it('is listed as stdio through the bridge, under its own name, with its calls', async () => {
    const repo = await makeTempRepo({ 'notes.txt': 'hello\n' });
    cleanups.push(repo.cleanup);
    const dataDir = await makeTempDir();
    const host = await Host.open({
      dataDir,
      firstPort: randomFirstPort(),
      worktreePollMs: 0,
      log: createLogger([]),
    });
    cleanups.push(() => host.close());
    await host.addRepo(repo.root);
    await host.startAll();
    const worktreeId = host.snapshot().repos[0]!.worktrees[0]!.id;
    const clients = (): ClientInfo[] =>
      host.snapshot().repos[0]!.worktrees[0]!.clients.filter((c) => c.connection !== 'closed');

    // Both bridges at once: each is a process of its own (slow to start on a loaded machine).
    const connectThroughBridge = async (name: string, modern: boolean) => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [GROVE, 'bridge', '--data-dir', dataDir, repo.root],
        stderr: 'pipe',
      });
      const client = new Client(
        { name, version: '0.14.0' },
        modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
      );
      await client.connect(transport);
      cleanups.push(() => client.close());
      await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
    };
    await Promise.all([
      connectThroughBridge('claude-ai', false),
      connectThroughBridge('a 2026 stdio client', true),
    ]);

    await waitFor(
      () => clients().filter((client) => client.calls === 1).length === 2,
      'both bridged clients and their calls',
      10_000,
    );
    const listed = clients()
      .map(({ name, transport, era, calls }) => ({ name, transport, era, calls }))
      .sort((a, b) => a.name.localeCompare(b.name));
    expect(listed).toEqual([
      { name: 'a 2026 stdio client', transport: 'stdio', era: 'modern', calls: 1 },
      { name: 'claude-ai', transport: 'stdio', era: 'legacy', calls: 1 },
    ]);
    await waitFor(
      () => (host.snapshot().activity[worktreeId]?.length ?? 0) === 2,
      'the two calls in the activity',
      5000,
    );
    expect(
      host
        .snapshot()
        .activity[worktreeId]!.map((entry) => entry.clientName)
        .sort(),
    ).toEqual(['a 2026 stdio client', 'claude-ai']);
  }, 90_000);
});
