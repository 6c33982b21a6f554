// Where `grove bridge` finds what it serves: the worktree a path belongs to (the same discovery the
// host runs, so the path matches the host's record of it), and whether a Grove host is serving that
// worktree right now — its server's URL and token from the app database of the data directory,
// confirmed by the server answering `/healthz`.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../platform/errors.ts';
import { AppDatabase } from '../host/app-database.ts';
import { discoverRepo } from '../host/worktree-discovery.ts';
import { LISTEN_HOST } from '../mcp/http-answers.ts';

/** A running host's server for one worktree. */
export interface HostServer {
  /** Its Streamable HTTP endpoint (`/mcp`). */
  url: URL;
  /** Sent as a bearer token (harmless when the server does not require one). */
  token: string;
}

/** How long the bridge waits for a host's server to answer `/healthz`. */
export const HEALTH_CHECK_TIMEOUT_MS = 1_500;

/**
 * The root of the worktree `inputPath` is in (any directory inside it), as the host records it.
 * Throws a UserError when the path is not inside a git worktree or Grove would refuse to serve it.
 */
export async function worktreeRootOf(inputPath: string): Promise<string> {
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

/** True when a Grove worktree server answers `GET /healthz` on that port in time. */
export async function serverAnswers(
  port: number,
  timeoutMs = HEALTH_CHECK_TIMEOUT_MS,
): Promise<boolean> {
  try {
    const response = await fetch(`http://${LISTEN_HOST}:${port}/healthz`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await response.json().catch(() => undefined)) as { ok?: unknown } | undefined;
    return response.ok && body?.ok === true;
  } catch {
    return false;
  }
}

/** What the app database records about a worktree, as far as the bridge needs it. */
export interface WorktreeRecord {
  port: number;
  token: string;
  /** The worktree's own just-tasks setting (the bridge honours it when it serves the worktree). */
  justTasks: boolean;
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

/** The running host's server of a recorded worktree, or undefined when nothing answers its port. */
export async function hostServerOf(record: WorktreeRecord): Promise<HostServer | undefined> {
  if (!(await serverAnswers(record.port))) return undefined;
  return { url: new URL(`http://${LISTEN_HOST}:${record.port}/mcp`), token: record.token };
}
