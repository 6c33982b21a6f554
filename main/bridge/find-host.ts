// Where `grove bridge` finds what it serves: the worktree a path belongs to (the same discovery the
// host runs, so the path matches the host's record of it), and whether a Grove host is serving that
// worktree right now — its server's URL and token from the app database of the data directory,
// confirmed by the server answering `/healthz`.
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import path from 'node:path';
import { UserError } from '../platform/errors.ts';
import { AppDatabase } from '../host/app-database.ts';
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

/** One `GET /healthz`: true when it answers `{"ok":true}` within `timeoutMs`. */
function healthCheck(port: number, timeoutMs: number): Promise<boolean | 'timeout'> {
  return new Promise((resolve) => {
    const request = httpGet(
      { host: LISTEN_HOST, port, path: '/healthz', agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
          if (body.length > 4096) response.destroy();
        });
        response.once('end', () => {
          try {
            resolve(
              response.statusCode === 200 && (JSON.parse(body) as { ok?: unknown }).ok === true,
            );
          } catch {
            resolve(false);
          }
        });
        response.once('error', () => resolve(false));
      },
    );
    request.setTimeout(timeoutMs, () => {
      request.destroy();
      resolve('timeout');
    });
    request.once('error', () => resolve(false));
  });
}

/**
 * True when a Grove worktree server answers `GET /healthz` on that port. A host that is merely
 * busy (no answer in time) is asked once more before it counts as gone; a refused connection is
 * final at once. (node:http, not fetch: fetch loads undici, longer than the whole check.)
 */
export async function serverAnswers(
  port: number,
  timeoutMs = HEALTH_CHECK_TIMEOUT_MS,
): Promise<boolean> {
  const first = await healthCheck(port, timeoutMs);
  if (first !== 'timeout') return first;
  return (await healthCheck(port, timeoutMs)) === true;
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

/** The running host's server of a recorded worktree, or undefined when nothing answers its port. */
export async function hostServerOf(record: WorktreeRecord): Promise<HostServer | undefined> {
  if (!(await serverAnswers(record.port))) return undefined;
  return { url: new URL(`http://${LISTEN_HOST}:${record.port}/mcp`), token: record.token };
}
