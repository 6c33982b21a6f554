// How the host starts a worktree process. Headless and in tests: child_process.fork of the
// bundled worktree process (out/worktree/worktree-process.js, scripts/build-worktree.ts) under the
// same Node. The Electron shell provides another launcher (utilityProcess) implementing the same
// interface, for the same bundle.
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostToWorktree } from '../../shared/worktree-protocol.ts';

export interface WorktreeProcessHandle {
  readonly pid: number | undefined;
  send(message: HostToWorktree): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once when the process has exited, whatever the reason. */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  /** Ends the process at once (SIGKILL). */
  kill(): void;
}

export interface WorktreeLauncher {
  launch(): WorktreeProcessHandle;
}

/**
 * The bundle `npm run build` (and the test setup) writes with scripts/build-worktree.ts, which
 * takes its directory from here: one file to load, not hundreds.
 */
export const BUNDLED_WORKTREE_ENTRY = fileURLToPath(
  new URL('../../out/worktree/worktree-process.js', import.meta.url),
);
/** Through the root, so that it resolves from the CLI bundle (out/cli/) as from main/host/. */
const SOURCE_WORKTREE_ENTRY = fileURLToPath(
  new URL('../../main/worktree/worktree-process.ts', import.meta.url),
);

/**
 * The bundle when it has been built, else the TypeScript entry (slower to start, same behaviour).
 * GROVE_WORKTREE_ENTRY=source forces the sources, e.g. while editing without rebuilding.
 */
export function worktreeEntry(): string {
  if (process.env.GROVE_WORKTREE_ENTRY === 'source') return SOURCE_WORKTREE_ENTRY;
  return existsSync(BUNDLED_WORKTREE_ENTRY) ? BUNDLED_WORKTREE_ENTRY : SOURCE_WORKTREE_ENTRY;
}

/**
 * Node's on-disk compile cache for worktree processes: every worktree loads the same modules (MCP
 * SDK, zod, express...), so the second and later starts skip most parsing and compiling. A
 * user-set NODE_COMPILE_CACHE wins.
 */
const COMPILE_CACHE_DIR =
  process.env.NODE_COMPILE_CACHE ?? path.join(tmpdir(), `grove-compile-cache-${userInfo().uid}`);

/**
 * The environment of a worktree process. glibc gives each thread that allocates its own malloc
 * arena (up to 8 per core); a worktree process has a dozen threads (libuv's pool, V8's, the
 * watcher's) whose arenas each keep touched pages. Two arenas: about 1 MB less RSS at rest
 * (docs/performance.md, idle memory), and the hot paths run in worker threads with their own V8
 * heaps, not in malloc. A user-set MALLOC_ARENA_MAX wins. Other C libraries ignore it.
 */
export function worktreeProcessEnv(): NodeJS.ProcessEnv {
  return { MALLOC_ARENA_MAX: '2', ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE_DIR };
}

/** Launches each worktree process with child_process.fork. */
export const forkLauncher: WorktreeLauncher = {
  launch() {
    const child = fork(worktreeEntry(), [], {
      execPath: process.execPath,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
      env: worktreeProcessEnv(),
    });
    // Errors of the IPC channel (EPIPE while the child exits) arrive here too. The exit listener
    // is what tells the supervisor, so an 'error' event must not crash the host; any other error
    // ends the child, which the supervisor then sees as an exit and restarts.
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ERR_IPC_CHANNEL_CLOSED') child.kill('SIGKILL');
    });
    return {
      pid: child.pid,
      send: (message) => {
        // A child that just died can still read as connected: the write then fails with EPIPE.
        // That failure is the exit the supervisor is about to see, not an error of its own, so
        // the callback swallows it instead of letting it become an uncaught exception.
        if (child.connected) child.send(message, (error) => void error);
      },
      onMessage: (listener) => child.on('message', listener),
      onExit: (listener) => child.once('exit', listener),
      kill: () => child.kill('SIGKILL'),
    };
  },
};
