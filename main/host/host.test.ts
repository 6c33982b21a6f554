// Integration tests of the host: real repos with linked worktrees, real worktree processes
// (child_process.fork), real servers on 127.0.0.1.
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorktreeState } from '../../shared/model.ts';
import {
  groveHealthzAnswer,
  isPortOpen,
  occupyPort,
  randomFirstPort,
  waitFor,
} from '../testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';
import { createLogger, formatLogLine } from '../platform/log.ts';
import { Host } from './host.ts';

const cleanups: (() => Promise<unknown>)[] = [];
const testFirstPort = randomFirstPort();
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function repoWithTwoLinkedWorktrees(): Promise<TempRepo> {
  const repo = await makeTempRepo({ 'src/index.ts': 'export const answer = 42;\n' });
  cleanups.push(repo.cleanup);
  await addWorktree(repo, 'feature-a');
  await addWorktree(repo, 'feature-b');
  return repo;
}

async function openHost(dataDir: string): Promise<Host> {
  const host = await Host.open({ dataDir, firstPort: testFirstPort });
  cleanups.push(() => host.close());
  return host;
}

function worktrees(host: Host): WorktreeState[] {
  return host.snapshot().repos.flatMap((repo) => repo.worktrees);
}

async function healthz(host: Host, worktree: WorktreeState): Promise<number> {
  const { token } = host.getConnectionInfo(worktree.id);
  const response = await fetch(`http://127.0.0.1:${worktree.port}/healthz`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return response.status;
}

describe('Host', () => {
  it('runs one server per worktree on distinct ports, and the same ports after a restart', async () => {
    const repo = await repoWithTwoLinkedWorktrees();
    const dataDir = await makeTempDir();

    const first = await openHost(dataDir);
    await first.addRepo(repo.root);
    await first.startAll();
    const running = worktrees(first);
    expect(running).toHaveLength(3);
    expect(running.map((worktree) => worktree.status.state)).toEqual([
      'running',
      'running',
      'running',
    ]);
    const ports = running.map((worktree) => worktree.port);
    expect(new Set(ports).size).toBe(3);
    for (const worktree of running) {
      expect(worktree.status).toEqual({ state: 'running', port: worktree.port });
      expect(await healthz(first, worktree)).toBe(200);
    }
    const tokens = running.map((worktree) => first.getConnectionInfo(worktree.id).token);
    await first.close();
    for (const port of ports) expect(await isPortOpen(port)).toBe(false);

    const second = await openHost(dataDir);
    await second.addRepo(repo.root);
    await second.startAll();
    const again = worktrees(second);
    expect(again.map((worktree) => worktree.path)).toEqual(
      running.map((worktree) => worktree.path),
    );
    expect(again.map((worktree) => worktree.port)).toEqual(ports);
    expect(again.map((worktree) => second.getConnectionInfo(worktree.id).token)).toEqual(tokens);
  });

  it('stops a server (its port refuses connections) and starts it again on the same port', async () => {
    const repo = await repoWithTwoLinkedWorktrees();
    const host = await openHost(await makeTempDir());
    await host.addRepo(repo.root);
    await host.startAll();
    const [main, featureA] = worktrees(host);
    // The states the window goes through. A worktree-changed event also reports other news
    // (clients, calls, the first reconciliation totals) with the state unchanged.
    const events: string[] = [];
    let lastState: string = featureA!.status.state;
    host.onEvent((event) => {
      if (event.type !== 'worktree-changed' || event.worktree.id !== featureA!.id) return;
      if (event.worktree.status.state === lastState) return;
      lastState = event.worktree.status.state;
      events.push(lastState);
    });

    await host.stopServer(featureA!.id);
    expect(worktrees(host)[1]!.status).toEqual({ state: 'stopped' });
    expect(await isPortOpen(featureA!.port)).toBe(false);
    expect(await healthz(host, main!)).toBe(200);

    await host.startServer(featureA!.id);
    expect(worktrees(host)[1]!.status).toEqual({ state: 'running', port: featureA!.port });
    expect(await healthz(host, featureA!)).toBe(200);
    expect(events).toEqual(['stopped', 'starting', 'running']);
  });

  it('moves to the next free port when another program took it, and remembers the move', async () => {
    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    const dataDir = await makeTempDir();
    const host = await openHost(dataDir);
    await host.addRepo(repo.root);
    await host.startAll();
    const [before] = worktrees(host);
    await host.stopServer(before!.id);

    const squatter = await occupyPort(before!.port);
    cleanups.push(() => new Promise((resolve) => squatter.close(resolve)));
    await host.startServer(before!.id);
    const [after] = worktrees(host);
    expect(after!.status.state).toBe('running');
    expect(after!.port).toBeGreaterThan(before!.port);
    expect(after!.portNotice).toBe(`port ${before!.port} was in use; moved to ${after!.port}`);
    expect(await healthz(host, after!)).toBe(200);
    await host.close();

    const reopened = await openHost(dataDir);
    await reopened.addRepo(repo.root);
    expect(worktrees(reopened)[0]!.port).toBe(after!.port);
  });

  it('keeps its port while its own previous server, going away, holds it, and says what it waits for', async () => {
    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    const logged: string[] = [];
    const host = await Host.open({
      dataDir: await makeTempDir(),
      firstPort: testFirstPort,
      log: createLogger([(record) => logged.push(formatLogLine(record))]),
    });
    cleanups.push(() => host.close());
    await host.addRepo(repo.root);
    const [worktree] = worktrees(host);
    const { token } = host.getConnectionInfo(worktree!.id);
    // The previous server of this worktree, still closing: it answers /healthz as every Grove
    // server does — with the proof that it knows this worktree's token — and lets go of the port
    // half a second after the new process asked who it is.
    let letGo = false;
    const previous = createServer((req, res) => {
      res.end(groveHealthzAnswer(req.url, token, worktree!.port));
      setTimeout(() => {
        letGo = true;
        previous.close();
        previous.closeAllConnections();
      }, 500);
    });
    await new Promise<void>((resolve) => previous.listen(worktree!.port, '127.0.0.1', resolve));
    cleanups.push(async () => previous.close());
    const details: string[] = [];
    host.onEvent((event) => {
      if (event.type === 'worktree-changed' && event.worktree.status.state === 'starting') {
        details.push(event.worktree.status.detail ?? '');
      }
    });
    await host.startServer(worktree!.id);
    expect(letGo).toBe(true);
    const [after] = worktrees(host);
    expect(after!.status).toEqual({ state: 'running', port: worktree!.port });
    expect(after!.portNotice).toBeNull();
    const waited =
      `port ${worktree!.port} is held by this worktree's previous server, still stopping; ` +
      `waiting up to 5 s for it to let go`;
    expect(details).toContain(waited);
    expect(logged.some((line) => line.includes(waited))).toBe(true);
  });

  it('says what a start slower than the limit waits for, in its status and the log', async () => {
    const repo = await makeTempRepo();
    cleanups.push(repo.cleanup);
    const logged: string[] = [];
    const host = await Host.open({
      dataDir: await makeTempDir(),
      firstPort: testFirstPort,
      // Every start is "slow" here: the limit is 1 ms.
      supervision: { slowStartMs: 1 },
      log: createLogger([(record) => logged.push(formatLogLine(record))]),
    });
    cleanups.push(() => host.close());
    await host.addRepo(repo.root);
    const details: string[] = [];
    host.onEvent((event) => {
      if (event.type === 'worktree-changed' && event.worktree.status.state === 'starting') {
        details.push(event.worktree.status.detail ?? '');
      }
    });
    await host.startAll();
    expect(worktrees(host)[0]!.status.state).toBe('running');
    const pid = host.processId(worktrees(host)[0]!.id);
    expect(details).toContain(`waiting for the server process (pid ${pid}) to load`);
    expect(
      logged.some((line) =>
        /server slow to start \(\d+ s\): waiting for the server process \(pid \d+\) to load/.test(
          line,
        ),
      ),
    ).toBe(true);
  });

  it('restarts a worktree process killed with SIGKILL, on the same port, leaving others alone', async () => {
    const repo = await repoWithTwoLinkedWorktrees();
    const host = await openHost(await makeTempDir());
    await host.addRepo(repo.root);
    await host.startAll();
    const [main, victim] = worktrees(host);
    const states: string[] = [];
    host.onEvent((event) => {
      if (event.type === 'worktree-changed' && event.worktree.id === victim!.id) {
        states.push(event.worktree.status.state);
      }
    });
    process.kill(host.processId(victim!.id)!, 'SIGKILL');
    await waitFor(() => states.includes('error'), 'the host to notice the crash', 2000);
    await waitFor(
      () => worktrees(host)[1]!.status.state === 'running',
      'the worktree to be running again',
      3000,
    );
    expect(worktrees(host)[1]!.port).toBe(victim!.port);
    expect(await healthz(host, worktrees(host)[1]!)).toBe(200);
    expect(await healthz(host, main!)).toBe(200);
  });

  it('puts a worktree whose directory vanished into error, with a message', async () => {
    const repo = await repoWithTwoLinkedWorktrees();
    const host = await openHost(await makeTempDir());
    await host.addRepo(repo.root);
    const featureB = worktrees(host)[2]!;
    await rm(featureB.path, { recursive: true, force: true });
    await host.startAll();
    const states = worktrees(host).map((worktree) => worktree.status);
    expect(states[0]!.state).toBe('running');
    expect(states[2]).toEqual({
      state: 'error',
      message: `worktree directory not found: ${featureB.path}`,
    });
  });
});
