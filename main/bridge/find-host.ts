// Where `grove bridge` finds what it serves: the worktree a path belongs to (the same discovery the
// host runs, so the path matches the host's record of it), and whether a Grove host is serving that
// worktree right now — its server's URL and token from the app database of the data directory,
// confirmed by the server on that port proving it holds the token (`/healthz?challenge=`,
// main/platform/http/healthz-proof.ts) before the token is ever sent there. The connection that carried the
// proof is the one the bridge's requests use (host-upstream.ts proves every new one the same way):
// a process that is not this data directory's host — another user's on the recorded port after the
// host stopped, another Grove — never receives the token, and the bridge serves the worktree itself.
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { UserError } from '../platform/errors.ts';
import { GROVE_VERSION } from '../platform/version.ts';
import { AppDatabase } from '../host/app-database.ts';
import { LISTEN_HOST } from '../mcp/http-answers.ts';
import { CHALLENGE_PARAM, newChallenge, proofMatches } from '../platform/http/healthz-proof.ts';

/** A running host's server for one worktree. */
export interface HostServer {
  /** Its Streamable HTTP endpoint (`/mcp`). */
  url: URL;
  /** Sent as a bearer token (harmless when the server does not require one). */
  token: string;
  /**
   * The connection on which the server proved itself, kept open (unreferenced) for the first
   * request; taken by host-upstream.ts.
   */
  proven?: Socket;
}

/** How long the bridge waits for a host's server to answer `/healthz`. */
export const HEALTH_CHECK_TIMEOUT_MS = 1_500;

/** The biggest `/healthz` answer read (Grove's is under 200 bytes). */
const MAX_HEALTHZ_BYTES = 4096;

/**
 * The root of the worktree `inputPath` is in (any directory inside it), as the host records it.
 * Throws a UserError when the path is not inside a git worktree or Grove would refuse to serve it.
 */
export async function worktreeRootOf(inputPath: string): Promise<string> {
  // Loaded only here: a bridge that found its worktree in the app database runs no git.
  const { discoverRepo } = await import('../host/worktree-discovery.ts');
  const repo = await discoverRepo(inputPath);
  const absolute = path.resolve(inputPath);
  // discoverRepo resolved symlinks; so must the path it is matched against.
  const real = await realpath(absolute);
  const inside = repo.worktrees
    .filter((worktree) => real === worktree.path || real.startsWith(`${worktree.path}${path.sep}`))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (inside === undefined) {
    throw new UserError(`not inside a worktree of ${repo.path}: ${absolute}`, {
      code: 'not-found',
    });
  }
  if (inside.refusal !== null) throw new UserError(inside.refusal, { code: 'refused' });
  return inside.path;
}

/**
 * What answers on a port: `own` — a server that proved it holds the token (its connection is kept
 * open, for the request that follows); `other` — something that answered without the proof;
 * `none` — nothing (refused, or the connection ended); `timeout` — no answer in time.
 */
export type PeerCheck =
  | { kind: 'own'; socket: Socket }
  | { kind: 'other'; detail: string }
  | { kind: 'none' }
  | { kind: 'timeout' };

/**
 * Connects to 127.0.0.1:port and asks `GET /healthz?challenge=` on that connection: the token
 * itself is never sent. Plain HTTP/1.1 on a socket (not node:http: the proven socket is handed to
 * the upstream's agent as it is; and node:http's ESM facade loads undici). `timeoutMs` 0: none.
 */
export function provePeer(port: number, token: string, timeoutMs: number): Promise<PeerCheck> {
  return new Promise((resolve) => {
    const challenge = newChallenge();
    const socket = connect({ host: LISTEN_HOST, port });
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (check: PeerCheck): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.removeListener('data', ondata);
      socket.removeListener('end', onend);
      if (check.kind !== 'own') socket.destroy();
      else socket.on('error', () => undefined); // until the agent takes it
      resolve(check);
    };
    const timer =
      timeoutMs > 0 ? setTimeout(() => finish({ kind: 'timeout' }), timeoutMs) : undefined;
    const ondata = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      if (received.length > MAX_HEALTHZ_BYTES) return finish(other('an answer too large'));
      const answer = parseAnswer(received);
      if (answer === undefined) return; // not all of it yet
      if (typeof answer === 'string') return finish(other(answer));
      if (answer.status !== 200) return finish(other(`HTTP ${answer.status}`));
      let body: { ok?: unknown; proof?: unknown };
      try {
        body = JSON.parse(answer.body) as typeof body;
      } catch {
        return finish(other('an answer that is not JSON'));
      }
      if (body.ok !== true) return finish(other('not a Grove worktree server'));
      if (!proofMatches(token, port, challenge, body.proof)) {
        return finish(other("no proof it holds this worktree's token"));
      }
      if (answer.close) return finish({ kind: 'none' }); // proven, but closing this connection
      finish({ kind: 'own', socket });
    };
    const onend = (): void => finish({ kind: 'none' });
    socket.on('data', ondata);
    socket.once('end', onend);
    socket.once('error', () => finish({ kind: 'none' }));
    socket.once('connect', () => {
      socket.write(
        `GET /healthz?${CHALLENGE_PARAM}=${challenge} HTTP/1.1\r\n` +
          `Host: ${LISTEN_HOST}:${port}\r\n` +
          `User-Agent: grove-bridge/${GROVE_VERSION}\r\n` +
          `Connection: keep-alive\r\n\r\n`,
      );
    });
  });
}

function other(detail: string): PeerCheck {
  return { kind: 'other', detail };
}

/**
 * An HTTP/1.1 answer with a Content-Length body, once it is all there: undefined while it is not,
 * a string saying why it is not one the bridge reads.
 */
function parseAnswer(
  received: Buffer,
): { status: number; body: string; close: boolean } | string | undefined {
  const end = received.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...headerLines] = received
    .subarray(0, end)
    .toString('latin1')
    .split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!status) return 'not an HTTP answer';
  const headers = new Map(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const;
    }),
  );
  const length = headers.get('content-length');
  if (length === undefined || !/^\d+$/.test(length)) return 'an answer without a length';
  const body = received.subarray(end + 4);
  if (body.length < Number(length)) return undefined;
  if (body.length > Number(length)) return 'more than it announced';
  return {
    status: Number(status[1]),
    body: body.toString('utf8'),
    close: /\bclose\b/i.test(headers.get('connection') ?? ''),
  };
}

/**
 * Whether this worktree's own server answers on `port` (it proves it holds `token`). A server that
 * is merely busy (no answer in time) is asked once more before it counts as gone; a refused
 * connection or another server is final at once.
 */
export async function hostAnswers(
  port: number,
  token: string,
  timeoutMs = HEALTH_CHECK_TIMEOUT_MS,
): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const check = await provePeer(port, token, timeoutMs);
    if (check.kind === 'own') check.socket.destroy();
    if (check.kind !== 'timeout') return check.kind === 'own';
  }
  return false;
}

/** What the app database records about a worktree, as far as the bridge needs it. */
export interface WorktreeRecord {
  port: number;
  token: string;
  /** The worktree's own just-tasks setting (the bridge honours it when it serves the worktree). */
  justTasks: boolean;
}

/** Whether the data directory has an app database (a host ran there once). */
export function hasAppDatabase(dataDir: string): boolean {
  return existsSync(path.join(dataDir, AppDatabase.FILE_NAME));
}

/**
 * The app database's record of the worktree at `root`, or undefined when there is no database or
 * the worktree was never opened in Grove. Throws when the database cannot be read.
 */
export function readWorktreeRecord(dataDir: string, root: string): WorktreeRecord | undefined {
  const database = AppDatabase.openReadOnly(dataDir);
  if (database === undefined) return undefined;
  try {
    const row = database.getWorktreeByPath(root);
    return row && { port: row.port, token: row.token, justTasks: row.justTasks };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot read the app database in ${dataDir}: ${reason}`, { cause: error });
  } finally {
    database.close();
  }
}

/**
 * The running host's server of a recorded worktree, or undefined when nothing on its port proves
 * it is that server (nothing answers, or another process does). Asked twice when the first ask
 * gets no answer in time (a busy host).
 */
export async function hostServerOf(record: WorktreeRecord): Promise<HostServer | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const check = await provePeer(record.port, record.token, HEALTH_CHECK_TIMEOUT_MS);
    if (check.kind === 'timeout') continue;
    if (check.kind !== 'own') return undefined;
    check.socket.unref(); // kept for the first request, but holds nothing open
    const url = new URL(`http://${LISTEN_HOST}:${record.port}/mcp`);
    return { url, token: record.token, proven: check.socket };
  }
  return undefined;
}
