// Test helpers for loopback networking: whether a port accepts connections, bounded polling.
import { createServer, connect, type Server } from 'node:net';
import { CHALLENGE_PARAM, healthzProof, isChallenge } from '../platform/http/healthz-proof.ts';

/** Resolves true if 127.0.0.1:port accepts a TCP connection. */
export function isPortOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Polls `check` every `intervalMs` until it returns true; throws after `timeoutMs`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  description: string,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
}

/**
 * Occupies 127.0.0.1:port with a plain TCP server (another program holding the port) that accepts
 * connections and never answers; it reads them, so one closed by its client ends (and close()
 * does not wait for it forever).
 */
export function occupyPort(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.on('error', () => undefined).resume());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/**
 * A random base port for one test's worktrees (GROVE_FIRST_PORT / HostOptions.firstPort), so test
 * files running in parallel do not contend for Grove's default ports.
 */
export function randomFirstPort(): number {
  return 20_000 + Math.floor(Math.random() * 800) * 50;
}

/** True when nothing listens on 127.0.0.1:port now (it could be listened on). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () =>
      probe.close(() => resolve(true)),
    );
  });
}

/**
 * Like randomFirstPort, but the `count` ports from it are free now (other test files, other
 * programs on this machine), for a test that asserts which of them its worktrees get.
 */
export async function randomFreeFirstPort(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = randomFirstPort();
    let free = true;
    for (let port = first; port < first + count && free; port++) free = await canListen(port);
    if (free) return first;
  }
  throw new Error(`no range of ${count} free ports found`);
}

/**
 * What a Grove worktree server holding `token` on `port` answers to `GET <url>` on /healthz: the
 * proof of its token when the URL carries a challenge (platform/http/healthz-proof.ts), else the
 * plain answer. For tests that pose as a worktree server: its own previous one, or another Grove.
 */
export function groveHealthzAnswer(url: string | undefined, token: string, port: number): string {
  const challenge = new URL(url ?? '/', 'http://127.0.0.1').searchParams.get(CHALLENGE_PARAM);
  return JSON.stringify(
    isChallenge(challenge)
      ? { ok: true, proof: healthzProof(token, port, challenge) }
      : { ok: true },
  );
}
