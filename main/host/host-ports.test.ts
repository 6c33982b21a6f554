// Ports when other programs hold some of them (issue 32, item 4), with a real Host, real git
// worktrees, real worktree processes and real listeners on 127.0.0.1: a worktree whose port is
// taken moves past every port its siblings have, no worktree waits for a server that is not its
// own previous one, the ports stay put across a restart, and the user can take the old port back
// once it is free (or keep the new one).
import { randomBytes } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { Server as NetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HostEvent } from '../../shared/host-api.ts';
import type { WorktreeState } from '../../shared/model.ts';
import { UserError } from '../platform/errors.ts';
import { groveHealthzAnswer, isPortOpen, occupyPort, randomFreeFirstPort } from '../testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { Host } from './host.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function worktrees(host: Host): WorktreeState[] {
  return host.snapshot().repos.flatMap((repo) => repo.worktrees);
}

async function openHost(dataDir: string, firstPort: number): Promise<Host> {
  const host = await Host.open({ dataDir, firstPort, worktreePollMs: 0 });
  cleanups.push(() => host.close());
  return host;
}

function closeServer(server: HttpServer | NetServer): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    if ('closeAllConnections' in server) server.closeAllConnections();
  });
}

/**
 * A Grove worktree server of another data directory: it answers `/healthz` as every Grove server
 * does, with the proof of its own token (not one any worktree here has), and never lets go.
 */
async function otherGrove(port: number): Promise<HttpServer> {
  const token = randomBytes(32).toString('base64url');
  const server = createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(groveHealthzAnswer(req.url, token, port));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  cleanups.push(() => closeServer(server));
  return server;
}

/** Every `starting` detail the host reports, per worktree path. */
function recordStartDetails(host: Host): string[] {
  const details: string[] = [];
  host.onEvent((event: HostEvent) => {
    if (event.type !== 'worktree-changed' || event.worktree.status.state !== 'starting') return;
    if (event.worktree.status.detail) {
      details.push(`${event.worktree.path}: ${event.worktree.status.detail}`);
    }
  });
  return details;
}

describe('Host ports held by other programs', () => {
  it('16 worktrees, 3 of their ports held: those 3 move past every sibling, none waits, the ports stay', async () => {
    const repo = await makeTempRepo({ 'src/index.ts': 'export const answer = 42;\n' });
    cleanups.push(repo.cleanup);
    for (let index = 1; index < 16; index++) await addWorktree(repo, `wt-${index}`);
    const dataDir = await makeTempDir();
    const firstPort = await randomFreeFirstPort(40);
    const host = await openHost(dataDir, firstPort);
    await host.addRepo(repo.root);
    const assigned = worktrees(host);
    expect(assigned).toHaveLength(16);
    // A fresh data directory hands out the ports from the first one up, one per worktree.
    const defaults = new Map(assigned.map((worktree) => [worktree.id, worktree.port]));
    expect([...defaults.values()].sort((a, b) => a - b)).toEqual(
      Array.from({ length: 16 }, (_, index) => firstPort + index),
    );
    // Another Grove (another data directory) on one of them, two plain programs on two more.
    const heldPorts = [firstPort + 1, firstPort + 4, firstPort + 8];
    await otherGrove(heldPorts[0]!);
    for (const port of heldPorts.slice(1)) {
      const squatter = await occupyPort(port);
      cleanups.push(() => closeServer(squatter));
    }

    const details = recordStartDetails(host);
    await host.startAll();
    const started = worktrees(host);
    expect(started.map((worktree) => worktree.status.state)).toEqual(Array(16).fill('running'));
    // Nobody waited: no worktree's previous server holds anything here.
    expect(details.filter((detail) => /previous|waiting up to/i.test(detail))).toEqual([]);
    const ports = started.map((worktree) => worktree.port);
    expect(new Set(ports).size).toBe(16);
    for (const worktree of started) {
      const before = defaults.get(worktree.id)!;
      if (heldPorts.includes(before)) {
        // Moved past every port a sibling has: none of them had to move or wait in turn.
        expect(worktree.port).toBeGreaterThan(firstPort + 15);
        expect(worktree.movedFromPort).toBe(before);
        expect(worktree.portNotice).toBe(`port ${before} was in use; moved to ${worktree.port}`);
      } else {
        expect(worktree.port).toBe(before);
        expect(worktree.movedFromPort).toBeNull();
        expect(worktree.portNotice).toBeNull();
      }
      expect(worktree.status).toEqual({ state: 'running', port: worktree.port });
    }
    await host.close();

    // Again, with the same programs still holding their ports: every worktree is where it was.
    const again = await openHost(dataDir, firstPort);
    await again.addRepo(repo.root);
    const detailsAgain = recordStartDetails(again);
    await again.startAll();
    const restarted = worktrees(again);
    expect(restarted.map((worktree) => worktree.port)).toEqual(ports);
    expect(restarted.map((worktree) => worktree.status.state)).toEqual(Array(16).fill('running'));
    expect(restarted.map((worktree) => worktree.movedFromPort)).toEqual(
      started.map((worktree) => worktree.movedFromPort),
    );
    expect(detailsAgain.filter((detail) => /previous|waiting up to/i.test(detail))).toEqual([]);
  }, 240_000);

  it('waits for its own previous server (same data directory), never for another Grove', async () => {
    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    const firstPort = await randomFreeFirstPort(30);
    const dataDir = await makeTempDir();
    const previousHost = await openHost(dataDir, firstPort);
    await previousHost.addRepo(repo.root);
    await previousHost.startAll();
    const [served] = worktrees(previousHost);
    expect(served!.status).toEqual({ state: 'running', port: firstPort });

    // Another Grove (its own data directory, so its own token) wants the same port: it moves at
    // once, without waiting for a server that is not its own.
    const other = await openHost(await makeTempDir(), firstPort);
    await other.addRepo(repo.root);
    const otherDetails = recordStartDetails(other);
    await other.startAll();
    const [elsewhere] = worktrees(other);
    expect(otherDetails).toEqual([]);
    expect(elsewhere).toMatchObject({ port: firstPort + 1, movedFromPort: firstPort });
    await other.close();

    // This data directory's next host (the previous one still stopping, as after a kill): it
    // waits for its own previous server, which proves it knows the token, and keeps the port.
    const next = await openHost(dataDir, firstPort);
    await next.addRepo(repo.root);
    const details = recordStartDetails(next);
    let stopping: Promise<void> | undefined;
    next.onEvent((event) => {
      const detail = event.type === 'worktree-changed' ? event.worktree.status : undefined;
      if (detail?.state === 'starting' && detail.detail?.includes('previous server')) {
        stopping ??= previousHost.close();
      }
    });
    await next.startAll();
    await stopping;
    expect(details).toEqual([
      `${served!.path}: port ${firstPort} is held by this worktree's previous server, still ` +
        `stopping; waiting up to 5 s for it to let go`,
    ]);
    expect(worktrees(next)[0]).toMatchObject({
      port: firstPort,
      movedFromPort: null,
      status: { state: 'running', port: firstPort },
    });
  }, 60_000);

  it('takes the old port back once it is free, and says so while it is not', async () => {
    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    await addWorktree(repo, 'feature');
    const firstPort = await randomFreeFirstPort(30);
    const host = await openHost(await makeTempDir(), firstPort);
    await host.addRepo(repo.root);
    const [main, feature] = worktrees(host);
    const squatter = await occupyPort(main!.port);
    cleanups.push(() => closeServer(squatter));
    await host.startAll();
    const moved = worktrees(host)[0]!;
    expect(moved.movedFromPort).toBe(main!.port);
    expect(moved.port).not.toBe(feature!.port);

    // Still held: refused, nothing changes.
    const refusal = await host.reclaimPort(main!.id).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UserError);
    expect(refusal).toMatchObject({
      code: 'busy',
      message: `port ${main!.port} is still in use by another program; try again once it lets go of it`,
    });
    expect(worktrees(host)[0]!.port).toBe(moved.port);

    await closeServer(squatter);
    const back = await host.reclaimPort(main!.id);
    expect(back.port).toBe(main!.port);
    expect(back.status).toEqual({ state: 'running', port: main!.port });
    expect(back.movedFromPort).toBeNull();
    expect(back.portNotice).toBeNull();
    expect(await isPortOpen(moved.port)).toBe(false);
    expect(host.getConnectionInfo(main!.id).urls.mcp).toBe(`http://127.0.0.1:${main!.port}/mcp`);
    // Nothing left to take back.
    await expect(host.reclaimPort(main!.id)).rejects.toThrow(/did not move: nothing to take back/);
  }, 60_000);

  it('keeps the new port when the user says so, and the notice goes', async () => {
    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    const dataDir = await makeTempDir();
    const firstPort = await randomFreeFirstPort(30);
    const host = await openHost(dataDir, firstPort);
    await host.addRepo(repo.root);
    const [before] = worktrees(host);
    const squatter = await occupyPort(before!.port);
    cleanups.push(() => closeServer(squatter));
    await host.startAll();
    const moved = worktrees(host)[0]!;
    expect(moved.movedFromPort).toBe(before!.port);

    const kept = host.keepMovedPort(moved.id);
    expect(kept.port).toBe(moved.port);
    expect(kept.movedFromPort).toBeNull();
    expect(kept.portNotice).toBeNull();
    expect(kept.status).toEqual({ state: 'running', port: moved.port });
    await host.close();

    const reopened = await openHost(dataDir, firstPort);
    await reopened.addRepo(repo.root);
    expect(worktrees(reopened)[0]).toMatchObject({ port: moved.port, movedFromPort: null });
  }, 60_000);
});
