// claimPort with real listeners on 127.0.0.1: a free stable port is taken; a port held by another
// program or another Grove server is left at once (no wait), for the next port no other worktree
// has; a port held by this worktree's own previous server (it proves it knows the token) is
// waited for, and taken when it is let go.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { groveHealthzAnswer, isPortOpen, occupyPort, randomFreeFirstPort } from '../testing/net.ts';
import { PORT_ATTEMPTS } from '../../shared/worktree-protocol.ts';
import { claimPort, portHolder } from './port-claim.ts';

const TOKEN = 'port-claim-token-0123456789abcdef';
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Binds one port the way the worktree process does (rejects with EADDRINUSE when taken). */
function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      cleanups.push(() => new Promise((done) => server.close(done)));
      resolve(server);
    });
  });
}

function portOf(server: Server): number {
  return (server.address() as { port: number }).port;
}

/** A Grove worktree server holding `port` with `token`; `onAsked` runs after each /healthz. */
async function groveServer(port: number, token: string, onAsked?: () => void): Promise<HttpServer> {
  const server = createHttpServer((req, res) => {
    res.end(groveHealthzAnswer(req.url, token, port));
    onAsked?.();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise((done) => {
        server.close(done);
        server.closeAllConnections();
      }),
  );
  return server;
}

async function squat(port: number): Promise<void> {
  const server = await occupyPort(port);
  cleanups.push(() => new Promise((done) => server.close(done)));
}

describe('claimPort', () => {
  it('listens on the stable port when it is free', async () => {
    const port = await randomFreeFirstPort(45);
    const waits: string[] = [];
    const server = await claimPort(listen, { port, token: TOKEN, onWaiting: (d) => waits.push(d) });
    expect(portOf(server)).toBe(port);
    expect(waits).toEqual([]);
  });

  it('moves at once past every port other worktrees have when another program holds it', async () => {
    const port = await randomFreeFirstPort(45);
    await squat(port);
    // The next free port after port+1..port+3 (which siblings have) is port+4; port+5 is free too.
    const waits: string[] = [];
    const server = await claimPort(listen, {
      port,
      avoidPorts: [port + 1, port + 2, port + 3],
      token: TOKEN,
      onWaiting: (detail) => waits.push(detail),
    });
    expect(portOf(server)).toBe(port + 4);
    expect(waits).toEqual([]);
    // The siblings' ports were never touched.
    for (const sibling of [port + 1, port + 2, port + 3])
      expect(await isPortOpen(sibling)).toBe(false);
  });

  it('does not wait for another Grove server (a sibling, another data directory)', async () => {
    const port = await randomFreeFirstPort(45);
    await groveServer(port, 'someone-elses-token-0123456789');
    expect(await portHolder(port, TOKEN)).toBe('grove');
    const waits: string[] = [];
    // A grace far longer than any test: a wait would show as a timeout, not as a slow pass.
    const server = await claimPort(listen, {
      port,
      token: TOKEN,
      graceMs: 10 * 60_000,
      onWaiting: (detail) => waits.push(detail),
    });
    expect(portOf(server)).toBe(port + 1);
    expect(waits).toEqual([]);
  });

  it('does not wait on a holder that drips its answer (a byte every 200 ms, never ending)', async () => {
    const port = await randomFreeFirstPort(45);
    // Headers at once, then one byte of body every 200 ms for as long as it is connected: each
    // byte comes well within the socket's 1 s idle timeout, so only a cap on the whole ask ends it.
    const dripping = new Set<ReturnType<typeof setInterval>>();
    const server = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 200);
      dripping.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        dripping.delete(timer);
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise((done) => {
          for (const timer of dripping) clearInterval(timer);
          server.close(done);
          server.closeAllConnections();
        }),
    );
    expect(await portHolder(port, TOKEN)).toBe('other');
    const waits: string[] = [];
    const moved = await claimPort(listen, {
      port,
      token: TOKEN,
      graceMs: 10 * 60_000,
      onWaiting: (detail) => waits.push(detail),
    });
    expect(portOf(moved)).toBe(port + 1);
    expect(waits).toEqual([]);
  });

  it("waits for this worktree's previous server and takes the port when it lets go", async () => {
    const port = await randomFreeFirstPort(45);
    let letGo = false;
    const previous = await groveServer(port, TOKEN, () => {
      // It lets go once asked (a previous server finishing its shutdown).
      if (letGo) return;
      letGo = true;
      setImmediate(() => {
        previous.close();
        previous.closeAllConnections();
      });
    });
    const waits: string[] = [];
    const server = await claimPort(listen, {
      port,
      token: TOKEN,
      graceMs: 10 * 60_000,
      onWaiting: (detail) => waits.push(detail),
    });
    expect(letGo).toBe(true);
    expect(portOf(server)).toBe(port);
    expect(waits).toEqual([
      `port ${port} is held by this worktree's previous server, still stopping; ` +
        `waiting up to 600 s for it to let go`,
    ]);
  });

  it("does not count the ports it skips (other worktrees') against its attempts", async () => {
    const port = await randomFreeFirstPort(45);
    await squat(port);
    const avoidPorts = Array.from({ length: 40 }, (_, index) => port + 1 + index);
    const server = await claimPort(listen, { port, avoidPorts, token: TOKEN, onWaiting: () => {} });
    expect(portOf(server)).toBe(port + 41);
  });

  it('names the stable port and how far it looked when no port is free', async () => {
    const port = await randomFreeFirstPort(45);
    for (let offset = 0; offset <= PORT_ATTEMPTS; offset++) await squat(port + offset);
    await expect(claimPort(listen, { port, token: TOKEN, onWaiting: () => {} })).rejects.toThrow(
      `port ${port} is in use and no free port was found after it ` +
        `(${PORT_ATTEMPTS} tried, up to ${port + PORT_ATTEMPTS}, skipping the ports of other worktrees)`,
    );
  });
});
