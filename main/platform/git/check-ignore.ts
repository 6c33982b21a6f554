// Asks git which names in one directory are ignored (.gitignore at any level, .git/info/exclude,
// core.excludesFile), with `git check-ignore --stdin -z`. Git runs in the directory itself, so a
// nested repository or submodule answers with its own rules. Read-only: no locks, no fsmonitor,
// no repository discovery above the given ceiling, no GIT_* variables inherited from our caller.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawnGit } from './run-git.ts';

/** Longest a check-ignore call may take before we give up and filter nothing. */
const CHECK_IGNORE_TIMEOUT_MS = 30_000;

export interface IgnoredNames {
  /** The directory itself is ignored (so, by git's rules, is everything in it). */
  directoryIgnored: boolean;
  /** Names (as passed in) that git ignores. Tracked files are never reported. */
  ignored: Set<string>;
}

export interface CheckIgnoreOptions {
  /** git will not look for a repository in this directory or above it (GIT_CEILING_DIRECTORIES). */
  ceiling: string;
  signal?: AbortSignal;
}

/**
 * Which of `names` (entries of `directory`, no slashes) git ignores. Resolves to null when
 * `directory` is not in a git work tree, or git is missing or fails: the caller then filters
 * nothing.
 */
export function checkIgnoredNames(
  directory: string,
  names: readonly string[],
  options: CheckIgnoreOptions,
): Promise<IgnoredNames | null> {
  return new Promise((resolve) => {
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawnGit(['check-ignore', '--stdin', '-z'], {
        cwd: directory,
        ceiling: options.ceiling,
        signal: options.signal,
        timeoutMs: CHECK_IGNORE_TIMEOUT_MS,
      });
    } catch {
      resolve(null);
      return;
    }
    const stdout: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.resume();
    child.on('error', () => resolve(null));
    child.stdin.on('error', () => {
      // git exited early (not a repository); the exit code tells us what happened.
    });
    child.on('close', (code) => {
      // 0: some ignored, 1: none ignored, anything else: not a repository or a failure.
      if (code !== 0 && code !== 1) {
        resolve(null);
        return;
      }
      const result: IgnoredNames = { directoryIgnored: false, ignored: new Set() };
      for (const reported of Buffer.concat(stdout).toString('utf8').split('\0')) {
        if (reported === '') continue;
        // Every name went in as `./name` (so a leading `:` is never read as pathspec magic).
        const name = reported.startsWith('./') ? reported.slice(2) : reported;
        if (name === '.') result.directoryIgnored = true;
        else result.ignored.add(name);
      }
      resolve(result);
    });
    // `./.` asks about the directory itself.
    const input = ['.', ...names].map((name) => `./${name}\0`).join('');
    child.stdin.end(input, 'utf8');
  });
}
