// The one way Grove runs git, for the host and the worktree process alike: a clean environment
// (only the variables git needs from ours — never the GIT_* of whoever started us, nor pagers,
// editors or SSH helpers — plus those Grove sets), no optional locks (never index.lock behind
// the user's back), no prompts, no fsmonitor hook, no repository discovery above a ceiling, output
// kept as bytes (paths may not be UTF-8), a byte cap, a timeout and cancellation. Arguments a
// client chose go after `--end-of-options` (see resolveBase in main/reconcile/floor/git-queries.ts);
// paths go through stdin, never the command line. Output with many records is asked for with `-z`
// and split with splitNul. runGit waits through main/platform/run-process.ts (the one runner of
// programs); spawnGit is for callers that stream (check-ignore). docs/decisions.md ("One git runner") says why not simple-git.
// Git run for background work (a signal registered with pauseAtSlices: the window's state) waits
// while clients' calls run before it starts, and runs at a lower CPU priority (BACKGROUND_NICENESS).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { absolutePathEntries, runProcess } from '../run-process.ts';
import { isBackgroundWork, pauseIfAsked } from '../time-slices.ts';

/** Longest a query may take unless the caller says otherwise. */
export const GIT_TIMEOUT_MS = 30_000;
/** Most stdout bytes kept unless the caller says otherwise (100k paths are about 5 MiB). */
export const GIT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024;
/**
 * The nice value of git run for background work: beside a client's call (nice 0) it gets about a
 * tenth of a contended core (Linux's weights: 110 against 1024), alone it runs at full speed.
 */
export const BACKGROUND_NICENESS = 10;

/**
 * Variables git needs from our environment (finding itself, the user's config, locale, temp
 * files). Nothing else passes through.
 */
const PASSED_ENV =
  /^(PATH|PATHEXT|HOME|USERPROFILE|HOMEDRIVE|HOMEPATH|SYSTEMROOT|WINDIR|COMSPEC|APPDATA|LOCALAPPDATA|TEMP|TMP|TMPDIR|LANG|LANGUAGE|LC_[A-Z]+|XDG_CONFIG_HOME)$/i;

/** Variables a caller may set for one command (a scratch index and object store). */
export type GitScratchEnvironment = Partial<
  Record<'GIT_INDEX_FILE' | 'GIT_OBJECT_DIRECTORY' | 'GIT_ALTERNATE_OBJECT_DIRECTORIES', string>
>;

/** The environment of every git command Grove runs. */
export function gitEnvironment(
  ceiling: string | undefined,
  extra: GitScratchEnvironment = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && PASSED_ENV.test(key)) env[key] = value;
  }
  // The variable is a list; a ceiling whose name holds the separator cannot be expressed.
  if (ceiling !== undefined && !ceiling.includes(path.delimiter)) {
    env.GIT_CEILING_DIRECTORIES = ceiling;
  }
  env.GIT_OPTIONAL_LOCKS = '0';
  env.GIT_TERMINAL_PROMPT = '0';
  return { ...env, ...extra };
}

export interface RunGitOptions {
  /** Directory git runs in. */
  cwd: string;
  /**
   * git will not look for a repository in this directory or above it. Leave it out only to
   * find the repository a user's path belongs to (worktree discovery, in the host).
   */
  ceiling: string | undefined;
  env?: GitScratchEnvironment;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxOutputBytes?: number;
  /** Written to git's stdin, then closed. */
  input?: string | Buffer;
}

export interface GitOutput {
  /** Exit code; null if git was killed (timeout, cancellation, output cap) or could not run. */
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Every git command line: no fsmonitor hook, paths unquoted. */
function gitArguments(args: readonly string[]): string[] {
  return ['-c', 'core.fsmonitor=false', '-c', 'core.quotepath=false', ...args];
}

/**
 * Starts `git -c core.fsmonitor=false -c core.quotepath=false <args>` with Grove's environment.
 * Throws only when the process cannot be created at all.
 */
export function spawnGit(
  args: readonly string[],
  options: Omit<RunGitOptions, 'input' | 'maxOutputBytes'>,
): ChildProcessWithoutNullStreams {
  const env = gitEnvironment(options.ceiling, options.env);
  // Looked up in absolute PATH entries only: an empty or relative one names the worktree.
  if (process.platform !== 'win32') env.PATH = absolutePathEntries(env).join(path.delimiter);
  return spawn('git', gitArguments(args), {
    cwd: options.cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    signal: options.signal,
    timeout: options.timeoutMs ?? GIT_TIMEOUT_MS,
    windowsHide: true,
  });
}

/**
 * Runs git. Resolves with the exit code and output whatever the code; resolves with code null
 * when git could not run, was cancelled, timed out or exceeded the output cap. Never rejects.
 */
export async function runGit(args: readonly string[], options: RunGitOptions): Promise<GitOutput> {
  const background = isBackgroundWork(options.signal);
  // Background work steps aside while clients' calls run, before git starts too (a racily clean
  // index makes git read every file: that read would compete with the call).
  if (background) await pauseIfAsked(options.signal);
  const output = await runProcess('git', gitArguments(args), {
    ...(background ? { niceness: BACKGROUND_NICENESS } : {}),
    cwd: options.cwd,
    env: gitEnvironment(options.ceiling, options.env),
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? GIT_TIMEOUT_MS,
    input: options.input,
    maxStdoutBytes: options.maxOutputBytes ?? GIT_MAX_OUTPUT_BYTES,
    onOverflow: 'kill',
  });
  return {
    code: output.code,
    stdout: output.stdout,
    stderr: output.startError ? String(output.startError) : output.stderr.toString('utf8'),
  };
}

/** A git command that did not succeed: its arguments, exit code (null: killed) and stderr. */
export class GitCommandError extends Error {
  override name = 'GitCommandError';
  readonly args: readonly string[];
  readonly code: number | null;
  readonly stderr: string;

  constructor(args: readonly string[], code: number | null, stderr: string) {
    const reason =
      code === null ? 'was stopped (timeout, cancellation or output cap)' : `exited ${code}`;
    super(`git ${args[0] ?? ''} ${reason}${stderr.trim() ? `: ${stderr.trim()}` : ''}`);
    this.args = args;
    this.code = code;
    this.stderr = stderr;
  }
}

/** Runs git and resolves to its stdout as UTF-8; rejects with GitCommandError unless it exits 0. */
export async function gitStdout(args: readonly string[], options: RunGitOptions): Promise<string> {
  const output = await runGit(args, options);
  if (output.code !== 0) {
    options.signal?.throwIfAborted();
    throw new GitCommandError(args, output.code, output.stderr);
  }
  return output.stdout.toString('utf8');
}

/** Splits NUL-terminated records (the last, empty one dropped). */
export function splitNul(output: Buffer): Buffer[] {
  const records: Buffer[] = [];
  let start = 0;
  for (;;) {
    const end = output.indexOf(0, start);
    if (end === -1) {
      if (start < output.length) records.push(output.subarray(start));
      return records;
    }
    records.push(output.subarray(start, end));
    start = end + 1;
  }
}
