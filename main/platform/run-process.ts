// The one way Grove runs a program and waits for it (git through run-git.ts, `just` recipes and
// `docker compose ps` for the tools): an argument vector, never a shell; an environment the
// caller builds; output kept as bytes up to a cap (then either the process is stopped, or the rest
// is dropped and the result says so); a deadline and cancellation that stop the program — with
// `processGroup`, the program and everything it started (its own process group, signalled whole);
// output streamed to the caller as it comes; optionally a lower CPU priority (background work).
// Never rejects: a program that cannot start resolves with `code: null` and the reason.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import path from 'node:path';
import {
  findMarkedProcesses,
  findMarkedProcessesSync,
  isThisProcessMarker,
  newRunMarker,
  RUN_MARKER_VARIABLE,
  signalProcesses,
} from './process-tree.ts';

export interface RunProcessOptions {
  /** Directory the program runs in. */
  cwd: string;
  /** The program's whole environment (nothing of ours passes unless the caller put it here). */
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal | undefined;
  /** Stopped after this long (the result says `timedOut`). */
  timeoutMs: number;
  /** Written to stdin, then closed (default: stdin closed at once). */
  input?: string | Buffer | undefined;
  /** Most stdout bytes kept. */
  maxStdoutBytes: number;
  /** Most stderr bytes kept (default 64 KiB). */
  maxStderrBytes?: number;
  /**
   * What happens when stdout passes its cap: `kill` stops the program (a partial answer is
   * useless: git listings), `truncate` lets it run on and drops the rest (a build's log).
   */
  onOverflow: 'kill' | 'truncate';
  /** With `truncate`, which end of the output is kept (default the head; a log's tail says why it failed). */
  keep?: 'head' | 'tail';
  /**
   * Start the program in its own process group and signal the whole group when it is stopped,
   * so the shells and children a recipe starts end with it (POSIX; elsewhere the program alone).
   */
  processGroup?: boolean;
  /**
   * With `processGroup`, also mark every process the program starts (process-tree.ts: an
   * environment variable they inherit) and end those that left the group when it ends (Linux:
   * a walk of /proc, ~20 ms for 120 processes; for programs that run a client's commands, such
   * as just recipes).
   */
  markDescendants?: boolean;
  /**
   * The program's nice value from its first instruction (Linux, macOS: started through `nice`;
   * ignored elsewhere, or when ours is already as low): background work (the window's git) gives
   * the cores to clients' calls. What the program starts inherits it.
   */
  niceness?: number;
  /** Every chunk of output as it arrives, kept or not. */
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

export interface ProcessOutput {
  /** Exit code; null if the program could not start or was stopped (timeout, cancel, cap). */
  code: number | null;
  /** The signal that ended it, if one did. */
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  /** Output past the cap was dropped. */
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** Why it was stopped, if it was. */
  stopped: 'timeout' | 'cancelled' | 'output-cap' | null;
  /** Why it could not start (ENOENT: not installed), if it could not. */
  startError: NodeJS.ErrnoException | null;
}

/** Variables never passed to programs run for a client: Grove's own, LLM keys, anything named like a secret. */
const STRIPPED_ENV =
  /^(GROVE_|ANTHROPIC_|OPENAI_|JUST_|ELECTRON_|NODE_OPTIONS$)|(_API_KEY|_KEY|_TOKEN|_SECRET|_PASSWORD)$/i;

/**
 * The environment of a program run on a client's request (`just` recipes, `docker compose`): ours
 * without Grove's tokens and keys, LLM settings, `JUST_*` (which would redirect `just` to another
 * justfile) and any variable named like a secret (`*_API_KEY`, `*_KEY`, `*_TOKEN`, `*_SECRET`,
 * `*_PASSWORD`).
 */
export function childEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && !STRIPPED_ENV.test(key)) clean[key] = value;
  }
  return clean;
}

/** Default cap of kept stderr. */
export const DEFAULT_MAX_STDERR_BYTES = 64 * 1024;
/** After SIGTERM, how long a stopped program has before SIGKILL. */
export const KILL_GRACE_MS = 1_000;
/** After the program exited, how long its output streams may stay open (a grandchild holding them). */
const CLOSE_GRACE_MS = 2_000;
/**
 * With `processGroup`: after the program exited and what it left behind was signalled, how long
 * the output still in its pipes is read before the streams are closed. Only a process that escaped
 * (process-tree.ts) can hold them longer; the call does not wait for it.
 */
const EXIT_DRAIN_MS = 250;

/**
 * Process groups started here whose members may still run. If this process exits first (a
 * worktree process closing with a run going on, or a run's leftovers within their grace), they
 * are killed outright, with every process holding one of this process's run markers: a timer
 * would never fire.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function trackGroup(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const group of liveGroups) signalGroup(group, 'SIGKILL');
      signalProcesses(findMarkedProcessesSync(isThisProcessMarker), 'SIGKILL');
    });
  }
  liveGroups.add(pid);
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Ends what a run left behind: its process group and every process holding its marker, wherever
 * it went (SIGTERM, then SIGKILL after KILL_GRACE_MS); resolves once the first signal was sent.
 * The group leaves `liveGroups` after the second.
 */
async function endLeftovers(group: number, marker: string | undefined): Promise<void> {
  const marked = async (): Promise<number[]> =>
    marker === undefined ? [] : findMarkedProcesses((candidate) => candidate === marker);
  signalGroup(group, 'SIGTERM');
  signalProcesses(await marked(), 'SIGTERM');
  const timer = setTimeout(() => {
    signalGroup(group, 'SIGKILL');
    void marked().then((pids) => {
      signalProcesses(pids, 'SIGKILL');
      liveGroups.delete(group);
    });
  }, KILL_GRACE_MS);
  timer.unref(); // the exit hook kills what is left if this process ends first
}

/**
 * `env`'s PATH without its empty and relative entries. Both name the directory the program runs in
 * — a worktree, whose files are untrusted — so a committed executable named `docker` or `git`
 * would run in place of the one the user installed.
 */
export function absolutePathEntries(env: NodeJS.ProcessEnv): string[] {
  // Without PATH, the system's default search path (as execvp).
  const entries = env.PATH ?? ['/usr/bin', '/bin'].join(path.delimiter);
  return entries.split(path.delimiter).filter((entry) => path.isAbsolute(entry));
}

/** Where nice values exist (Windows has priority classes, which Grove does not set). */
const SUPPORTS_NICE = process.platform === 'linux' || process.platform === 'darwin';

/**
 * Programs found before, by command and PATH: git runs for nearly every tool call, and its lookup
 * (an access and a stat per PATH entry) need not be repeated. Only finds are kept: a program
 * installed later is found on the next call, and one removed since fails to start with ENOENT,
 * as one never found does.
 */
const foundPrograms = new Map<string, string>();

/** Where `command` is among the absolute entries of `env`'s PATH (POSIX), or undefined. */
function findProgram(command: string, env: NodeJS.ProcessEnv): string | undefined {
  if (process.platform === 'win32' || command.includes('/')) return command;
  const key = `${command}\0${env.PATH ?? ''}`;
  const known = foundPrograms.get(key);
  if (known !== undefined) return known;
  for (const directory of absolutePathEntries(env)) {
    const candidate = path.join(directory, command);
    // Synchronous on purpose: a few system calls on the user's PATH, never the worktree's files;
    // through the thread pool each entry took a turn behind whatever file reads were queued (the
    // CLI's first git started only after its specs were read and parsed).
    let found = false;
    try {
      accessSync(candidate, constants.X_OK);
      found = statSync(candidate).isFile();
    } catch {
      // not here, or not executable
    }
    if (found) {
      foundPrograms.set(key, candidate);
      return candidate;
    }
  }
  return undefined;
}

/**
 * Runs `command args` (no shell) and resolves with what happened. Never rejects. A bare command
 * is looked up in the absolute entries of the environment's PATH only; the program still gets
 * that PATH whole.
 */
export async function runProcess(
  command: string,
  args: readonly string[],
  options: RunProcessOptions,
): Promise<ProcessOutput> {
  const program = findProgram(command, options.env);
  if (program === undefined) {
    const error: NodeJS.ErrnoException = new Error(`spawn ${command} ENOENT`);
    error.code = 'ENOENT';
    return notStarted(error);
  }
  const nice = await niceIfAsked(options);
  if (nice === undefined) return runProgram(program, args, options);
  // Lowered by `nice` before git runs: runProgram must not lower it again (nice's raise is relative).
  const { niceness: _lowered, ...rest } = options;
  return runProgram(nice.program, [...nice.args, program, ...args], rest);
}

/**
 * The `nice` command line to start the program through when `options.niceness` asks for a lower
 * priority than ours. Setting it after the start would race: git may start its children (an
 * alias, a hook, a filter) before we lower it, and they would keep our priority. Without a `nice`
 * on the PATH, the program is lowered right after it started (runProgram), which covers git itself.
 */
async function niceIfAsked(
  options: RunProcessOptions,
): Promise<{ program: string; args: string[] } | undefined> {
  if (options.niceness === undefined || !SUPPORTS_NICE) return undefined;
  const raise = options.niceness - getPriority();
  if (raise <= 0) return undefined;
  const program = findProgram('nice', options.env);
  return program === undefined ? undefined : { program, args: ['-n', String(raise)] };
}

function notStarted(startError: NodeJS.ErrnoException): ProcessOutput {
  return {
    code: null,
    signal: null,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    stdoutTruncated: false,
    stderrTruncated: false,
    stopped: null,
    startError,
  };
}

function runProgram(
  command: string,
  args: readonly string[],
  options: RunProcessOptions,
): Promise<ProcessOutput> {
  const maxStderr = options.maxStderrBytes ?? DEFAULT_MAX_STDERR_BYTES;
  const group = options.processGroup === true && process.platform !== 'win32';
  return new Promise((resolve) => {
    const empty = notStarted;
    if (options.signal?.aborted) {
      resolve({ ...empty(new Error('cancelled before it started')), stopped: 'cancelled' });
      return;
    }
    // Every process the program starts inherits the marker (process-tree.ts).
    const marker = group && options.markDescendants === true ? newRunMarker() : undefined;
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(command, [...args], {
        cwd: options.cwd,
        env: marker === undefined ? options.env : { ...options.env, [RUN_MARKER_VARIABLE]: marker },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: group,
        shell: false,
        windowsHide: true,
      });
    } catch (error) {
      resolve(empty(error as NodeJS.ErrnoException));
      return;
    }
    if (options.niceness !== undefined && child.pid !== undefined) {
      lowerPriority(child.pid, options.niceness);
    }
    const groupPid = group ? child.pid : undefined;
    if (groupPid !== undefined) trackGroup(groupPid);
    const keep = options.onOverflow === 'truncate' ? (options.keep ?? 'head') : 'head';
    const stdout = new CappedBuffer(options.maxStdoutBytes, keep);
    const stderr = new CappedBuffer(maxStderr, keep);
    let stopped: ProcessOutput['stopped'] = null;
    let startError: NodeJS.ErrnoException | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    let closeTimer: NodeJS.Timeout | undefined;

    const signalProcess = (signal: NodeJS.Signals): void => {
      try {
        if (group && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      } catch {
        // Already gone.
      }
      if (marker !== undefined) {
        void findMarkedProcesses((candidate) => candidate === marker).then((pids) =>
          signalProcesses(pids, signal),
        );
      }
    };
    const stop = (reason: NonNullable<ProcessOutput['stopped']>): void => {
      if (stopped !== null) return;
      stopped = reason;
      signalProcess('SIGTERM');
      killTimer = setTimeout(() => signalProcess('SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    const deadline = setTimeout(() => stop('timeout'), options.timeoutMs);
    const onAbort = (): void => stop('cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      options.onStdout?.(chunk);
      if (!stdout.push(chunk) && options.onOverflow === 'kill') stop('output-cap');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      options.onStderr?.(chunk);
      stderr.push(chunk);
    });
    child.stdin.on('error', () => {
      // The program exited before reading its input; the exit code says why.
    });

    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(closeTimer);
      options.signal?.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
      // What the run left behind (its group, and marked processes that left it) was signalled at
      // its exit; a group that never exited (the pipes closed first) is ended now.
      if (groupPid !== undefined && !exited) {
        void endLeftovers(groupPid, marker);
      }
      resolve({
        code: stopped === null ? code : null,
        signal,
        stdout: stdout.bytes(),
        stderr: stderr.bytes(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        stopped,
        startError,
      });
    };
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        startError = error;
        finish(null, null);
      }
    });
    let exited = false;
    child.on('exit', (code, signal) => {
      exited = true;
      const closeAfter = (ms: number): void => {
        if (settled) return;
        closeTimer = setTimeout(() => {
          // Timers run before the loop polls for I/O: a loop held past `ms` would otherwise cut
          // output still waiting in the pipes. setImmediate runs after the next poll, which reads
          // all of it (and usually the end, so 'close' finishes first).
          setImmediate(() => {
            child.stdout.destroy();
            child.stderr.destroy();
            finish(code, signal);
          });
        }, ms);
        closeTimer.unref();
      };
      if (groupPid === undefined) {
        // Normally 'close' follows at once; a grandchild still holding the pipes must not hold us.
        closeAfter(CLOSE_GRACE_MS);
        return;
      }
      // The program is done, so is its run: what it left behind is ended, and 'close' follows
      // once they are gone; one that escaped may hold the pipes, so the rest is read briefly.
      void endLeftovers(groupPid, marker).then(() => closeAfter(EXIT_DRAIN_MS));
    });
    child.on('close', (code, signal) => finish(code, signal));
    child.stdin.end(options.input);
  });
}

/**
 * Gives a program just started the nice value `niceness`, where no `nice` could start it so
 * (niceIfAsked). Linux: its main thread, whose later threads and children inherit it; what it
 * started before this keeps ours. Harmless where it fails (Windows has no nice values; a system
 * may refuse): the program then runs at our priority.
 */
function lowerPriority(pid: number, niceness: number): void {
  if (!SUPPORTS_NICE) return;
  try {
    setPriority(pid, niceness);
  } catch {
    // Refused or already gone: it runs at our priority.
  }
}

/** Bytes kept up to a cap (the first or the last ones); `push` answers false once some were dropped. */
class CappedBuffer {
  readonly #max: number;
  readonly #keep: 'head' | 'tail';
  #chunks: Buffer[] = [];
  #size = 0;
  truncated = false;

  constructor(max: number, keep: 'head' | 'tail') {
    this.#max = max;
    this.#keep = keep;
  }

  push(chunk: Buffer): boolean {
    if (this.#keep === 'tail') {
      this.#chunks.push(chunk);
      this.#size += chunk.length;
      if (this.#size > this.#max) {
        const all = Buffer.concat(this.#chunks);
        this.#chunks = [all.subarray(all.length - this.#max)];
        this.#size = this.#max;
        this.truncated = true;
      }
      return !this.truncated;
    }
    const room = this.#max - this.#size;
    if (chunk.length > room) {
      if (room > 0) this.#chunks.push(chunk.subarray(0, room));
      this.#size = this.#max;
      this.truncated = true;
      return false;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    return true;
  }

  bytes(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}
