// How a worktree process gets its port. It listens on its stable port (the one the host remembers
// for it, and every client config names). When that port is taken it asks the holder who it is
// (platform/http/healthz-proof.ts): only this worktree's own previous server, still stopping (a
// host was killed, or restarts), is waited for — up to PORT_GRACE_MS — so that the port does not
// change. Anything else (a sibling worktree, a Grove of another data directory, another program)
// moves the worktree at once to the next free port, skipping every port another worktree of this
// host remembers (`avoidPorts`, from the host), so that a move never takes a sibling's port and
// never makes that sibling move or wait in turn.
import type * as NodeHttp from 'node:http';
import { LISTEN_HOST } from '../mcp/http-answers.ts';
import { requireBuiltin } from '../platform/builtins.ts';
import { CHALLENGE_PARAM, newChallenge, proofMatches } from '../platform/http/healthz-proof.ts';
import { PORT_ATTEMPTS } from '../../shared/worktree-protocol.ts';

/**
 * How long a worktree process waits for its stable port while its own previous server holds it
 * (still closing its sessions). Moving would change the port every client config names; waiting
 * costs a moment.
 */
export const PORT_GRACE_MS = 5_000;
/** Binds retried while nobody answers on a port that cannot be bound (it was just let go). */
const RELEASE_RETRIES = 3;
const RETRY_MS = 100;
/**
 * The whole of one ask of a port's holder, answer included. The socket's idle timeout (1 s) alone
 * let a holder that sends a byte now and then (a slowloris answer) hold a worktree's start forever.
 */
const PROBE_MS = 3_000;

/** Who listens on a port, as seen from the worktree that wants it. */
export type PortHolder = 'this-worktree' | 'grove' | 'nobody' | 'other';

export interface PortClaim {
  /** The stable port (0: any free port, tests). */
  port: number;
  /** Ports never moved to: those other worktrees of this host have or remember. */
  avoidPorts?: readonly number[];
  /** This worktree's token: its previous server proves it knows it. */
  token: string;
  /** Told what the start waits for (the holder is this worktree's previous server). */
  onWaiting(detail: string): void;
  /** Overrides PORT_GRACE_MS (tests). */
  graceMs?: number;
}

function isAddressInUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Who listens on 127.0.0.1:port: this worktree's previous server (a Grove worktree server whose
 * `/healthz` proves it knows `token`), another Grove worktree server (`{"ok":true}` without that
 * proof), nobody (the connection is refused), or another program.
 */
export function portHolder(port: number, token: string): Promise<PortHolder> {
  // Required, not imported: node:http's ESM facade would load undici (platform/builtins.ts).
  const { request } = requireBuiltin<typeof NodeHttp>('node:http');
  const challenge = newChallenge();
  return new Promise((resolve) => {
    let settled = false;
    const settle = (holder: PortHolder): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(holder);
    };
    const deadline = setTimeout(() => {
      settle('other'); // an answer that takes this long is not the quick one a Grove server gives
      probe.destroy();
    }, PROBE_MS);
    const probe = request(
      {
        host: LISTEN_HOST,
        port,
        path: `/healthz?${CHALLENGE_PARAM}=${challenge}`,
        method: 'GET',
        timeout: 1_000,
        agent: false,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body = (body + chunk).slice(0, 1_000)));
        response.on('end', () => settle(holderFromAnswer(response.statusCode, body)));
        response.on('error', () => settle('other'));
      },
    );
    probe.on('timeout', () => probe.destroy(new Error('timeout')));
    probe.on('error', (error: NodeJS.ErrnoException) =>
      settle(error.code === 'ECONNREFUSED' ? 'nobody' : 'other'),
    );
    probe.end();

    function holderFromAnswer(status: number | undefined, body: string): PortHolder {
      if (status !== 200) return 'other';
      let answer: unknown;
      try {
        answer = JSON.parse(body);
      } catch {
        return 'other';
      }
      if (typeof answer !== 'object' || answer === null) return 'other';
      const { ok, proof } = answer as { ok?: unknown; proof?: unknown };
      if (ok !== true) return 'other';
      return proofMatches(token, port, challenge, proof) ? 'this-worktree' : 'grove';
    }
  });
}

/**
 * The stable port is taken: waits for it while this worktree's previous server holds it (up to
 * the grace), or while nobody answers on it (it was just let go, a few retries). Undefined when
 * someone else holds it, or the previous server did not let go in time: then the worktree moves.
 */
async function waitForOwnPort<T>(
  listen: (port: number) => Promise<T>,
  claim: PortClaim,
): Promise<T | undefined> {
  const graceMs = claim.graceMs ?? PORT_GRACE_MS;
  const deadline = Date.now() + graceMs;
  let announced = false;
  let releaseRetries = 0;
  while (Date.now() < deadline) {
    const holder = await portHolder(claim.port, claim.token);
    if (holder === 'other' || holder === 'grove') return undefined;
    if (holder === 'nobody' && !announced && ++releaseRetries > RELEASE_RETRIES) return undefined;
    if (holder === 'this-worktree' && !announced) {
      announced = true;
      claim.onWaiting(
        `port ${claim.port} is held by this worktree's previous server, still stopping; ` +
          `waiting up to ${Math.round(graceMs / 1000)} s for it to let go`,
      );
    }
    try {
      return await listen(claim.port);
    } catch (error) {
      if (!isAddressInUse(error)) throw error;
    }
    await sleep(RETRY_MS);
  }
  return undefined;
}

/**
 * Listens on the stable port, or (held by anyone but this worktree's previous server) on the next
 * free port that no other worktree of this host has or remembers, trying at most PORT_ATTEMPTS.
 * `listen` binds one port and rejects with EADDRINUSE when it is taken.
 */
export async function claimPort<T>(
  listen: (port: number) => Promise<T>,
  claim: PortClaim,
): Promise<T> {
  if (claim.port === 0) return listen(0);
  try {
    return await listen(claim.port);
  } catch (error) {
    if (!isAddressInUse(error)) throw error;
  }
  const kept = await waitForOwnPort(listen, claim);
  if (kept !== undefined) return kept;
  const avoid = new Set(claim.avoidPorts);
  let tried = 0;
  let last = claim.port;
  for (let port = claim.port + 1; port <= 65_535 && tried < PORT_ATTEMPTS; port++) {
    if (avoid.has(port)) continue;
    tried++;
    last = port;
    try {
      return await listen(port);
    } catch (error) {
      if (!isAddressInUse(error)) throw error;
    }
  }
  throw new Error(
    `port ${claim.port} is in use and no free port was found after it ` +
      `(${tried} tried, up to ${last}, skipping the ports of other worktrees)`,
  );
}
