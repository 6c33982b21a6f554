// Runs read-only git queries for the worktree process: a clean environment (no inherited GIT_*
// variables, no optional locks, no prompts, no repository discovery above a ceiling), output kept
// as bytes (paths may not be UTF-8), a byte cap, a timeout and cancellation. Every git call of the
// tools goes through here or check-ignore.ts.
import { spawn } from 'node:child_process';
import path from 'node:path';

/** Longest a query may take unless the caller says otherwise. */
export const GIT_TIMEOUT_MS = 30_000;
/** Most stdout bytes kept unless the caller says otherwise (100k paths are about 5 MiB). */
export const GIT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024;

/** Environment for a read-only git query: no inherited GIT_* (GIT_DIR, GIT_WORK_TREE, ...). */
export function gitEnvironment(ceiling: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('GIT_')) env[key] = value;
  }
  // The variable is a list; a ceiling whose name holds the separator cannot be expressed.
  if (!ceiling.includes(path.delimiter)) env.GIT_CEILING_DIRECTORIES = ceiling;
  env.GIT_OPTIONAL_LOCKS = '0';
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

export interface RunGitOptions {
  /** Directory git runs in. */
  cwd: string;
  /** git will not look for a repository in this directory or above it. */
  ceiling: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxOutputBytes?: number;
  /** Written to git's stdin, then closed. */
  input?: string | Buffer;
}

export interface GitOutput {
  /** Exit code; null if git was killed (timeout, cancellation, output cap). */
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/**
 * Runs `git -c core.fsmonitor=false -c core.quotepath=false <args>`. Resolves with the exit code
 * and output whatever the code; resolves with code null when git could not run, was cancelled, timed
 * out or exceeded the output cap. Never rejects.
 */
export function runGit(args: readonly string[], options: RunGitOptions): Promise<GitOutput> {
  const maxBytes = options.maxOutputBytes ?? GIT_MAX_OUTPUT_BYTES;
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn('git', ['-c', 'core.fsmonitor=false', '-c', 'core.quotepath=false', ...args], {
        cwd: options.cwd,
        env: gitEnvironment(options.ceiling),
        stdio: ['pipe', 'pipe', 'pipe'],
        signal: options.signal,
        timeout: options.timeoutMs ?? GIT_TIMEOUT_MS,
        windowsHide: true,
      });
    } catch (error) {
      resolve({ code: null, stdout: Buffer.alloc(0), stderr: String(error) });
      return;
    }
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let overflow = false;
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      if (overflow) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxBytes) {
        overflow = true;
        child.kill();
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 64) stderr.push(chunk);
    });
    child.stdin.on('error', () => {
      // git exited before reading its input; the exit code says why.
    });
    let settled = false;
    const finish = (code: number | null): void => {
      if (settled) return;
      settled = true;
      resolve({
        code: overflow ? null : code,
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    };
    child.on('error', () => finish(null));
    child.on('close', (code) => finish(code));
    child.stdin.end(options.input);
  });
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
