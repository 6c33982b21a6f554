// Runs `grove serve --json` (the headless host, from the TypeScript sources under the test's own
// Node) as a child process, waits for its `ready` line and stops it cleanly. The ready line tells
// the test where the UI is and where each worktree's MCP server listens.
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { makeTempDir } from '../../main/testing/temp-repo.ts';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = path.join('bin', 'grove.js');

const ReadyLineSchema = z.object({
  event: z.literal('ready'),
  ui: z.string(),
  worktrees: z.array(
    z.object({
      path: z.string(),
      branch: z.string().nullable(),
      sse: z.string(),
      mcp: z.string(),
      token: z.string(),
      /** Present when this worktree's server failed to start. */
      error: z.string().optional(),
    }),
  ),
});
export type ReadyLine = z.infer<typeof ReadyLineSchema>;
export type ReadyWorktree = ReadyLine['worktrees'][number];

export interface GroveServeOptions {
  /** Repository paths passed on the command line. */
  repos: string[];
  /** App data directory; a fresh temp dir (deleted on stop) when omitted. */
  dataDir?: string;
  /** Port of the UI server; 0 (default) picks a free one, so hosts never collide. */
  uiPort?: number;
  /** How long to wait for the ready line. */
  readyTimeoutMs?: number;
  /** Extra environment variables. */
  env?: Record<string, string>;
}

export interface GroveServe {
  ui: string;
  /** The app data directory it runs with. */
  dataDir: string;
  worktrees: ReadyWorktree[];
  /** The worktree whose branch is `branch` (throws if there is none). */
  worktree(branch: string): ReadyWorktree;
  /** The port a worktree's server listens on, from its SSE URL. */
  port(branch: string): number;
  /** Every stdout line after the ready line. */
  readonly lines: readonly string[];
  /** Everything the host wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then SIGKILL if it has not exited in time; removes a temp data dir. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;

export async function startGroveServe(options: GroveServeOptions): Promise<GroveServe> {
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await makeTempDir('grove-serve-data-'));
  const child = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      '--json',
      '--data-dir',
      dataDir,
      '--ui-port',
      String(options.uiPort ?? 0),
      ...options.repos,
    ],
    {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return exited;
    stopped = true;
    await terminate(child, exited);
    if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
  };

  const lines: string[] = [];
  let ready: ReadyLine;
  try {
    ready = await waitForReady(
      child,
      lines,
      options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
      () => stderr.trim(),
    );
  } catch (error) {
    await stop();
    throw error;
  }

  const worktree = (branch: string): ReadyWorktree => {
    const found = ready.worktrees.find((w) => w.branch === branch);
    if (!found) {
      const known = ready.worktrees.map((w) => w.branch ?? '(detached)').join(', ');
      throw new Error(`grove serve reported no worktree on branch ${branch} (has: ${known})`);
    }
    return found;
  };
  return {
    ui: ready.ui,
    dataDir,
    worktrees: ready.worktrees,
    worktree,
    port: (branch) => Number(new URL(worktree(branch).sse).port),
    lines,
    stderr: () => stderr,
    stop,
  };
}

/** Resolves with the parsed first stdout line; rejects on exit, bad line or timeout. */
function waitForReady(
  child: ChildProcess,
  lines: string[],
  timeoutMs: number,
  stderr: () => string,
): Promise<ReadyLine> {
  const stdout = child.stdout;
  if (!stdout) return Promise.reject(new Error('grove serve has no stdout pipe'));
  const reader = createInterface({ input: stdout });
  return new Promise<ReadyLine>((resolve, reject) => {
    let settled = false;
    const fail = (message: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const log = stderr();
      reject(new Error(log ? `${message}\n--- grove serve stderr ---\n${log}` : message));
    };
    const timer = setTimeout(
      () => fail(`grove serve did not print its ready line within ${timeoutMs} ms`),
      timeoutMs,
    );
    child.once('error', (error) => fail(`grove serve could not be started: ${error.message}`));
    // 'close', not 'exit': by then stderr has been read to the end.
    child.once('close', (code, signal) =>
      fail(`grove serve exited before it was ready (code ${code}, signal ${signal})`),
    );
    reader.on('line', (line) => {
      if (settled) {
        lines.push(line);
        return;
      }
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch {
        fail(`grove serve's first stdout line is not JSON: ${line}`);
        return;
      }
      // What a slow start waits for (a previous Grove stopping, a slow server) comes before it.
      if ((json as { event?: unknown }).event === 'waiting') {
        lines.push(line);
        return;
      }
      const parsed = ReadyLineSchema.safeParse(json);
      if (!parsed.success) {
        fail(`grove serve's first stdout line is not a ready event: ${line}`);
        return;
      }
      settled = true;
      clearTimeout(timer);
      resolve(parsed.data);
    });
  });
}

async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), STOP_GRACE_MS);
    }),
  ]);
  clearTimeout(timer);
  if (gaveUp) {
    child.kill('SIGKILL');
    await exited;
  }
}
