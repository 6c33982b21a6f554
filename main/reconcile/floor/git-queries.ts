// Every git question the reconciliation engine asks, through the one git runner
// (main/platform/git/run-git.ts): the files of the worktree
// (tracked and untracked non-ignored, deletions noted), the paths changed vs a base (asked once,
// `-z`, renames with both sides), base validation, HEAD and branch, the default base. Git runs
// with no inherited GIT_* variables and GIT_OPTIONAL_LOCKS=0 (never takes index.lock behind the
// user's back). Nothing here puts a file path on a command line: paths go through stdin
// (intersection-diff.ts builds the diff of a path set that way).
import path from 'node:path';
import { displayPath } from '../../platform/confined-fs.ts';
import { UserError } from '../../platform/errors.ts';
import { gitStdout, type GitScratchEnvironment } from '../../platform/git/run-git.ts';
import {
  compareCodeUnits,
  compareUtf8,
  ordersAsUtf8,
  sortedUtf8,
} from '../../platform/path-order.ts';

/**
 * Longest one git command of the engine may take. Tool calls have their own deadline (which
 * cancels git through the signal); this bounds a call made without one.
 */
const ENGINE_GIT_TIMEOUT_MS = 120_000;

export interface GitOptions {
  /** A scratch index and object store (intersection-diff.ts). */
  env?: GitScratchEnvironment;
  /** Bytes written to git's stdin. */
  input?: Buffer | string;
  signal?: AbortSignal;
  /** Most bytes of output: beyond it git is stopped and the call fails (default: the runner's). */
  maxOutputBytes?: number;
}

/**
 * `git <args>` in the worktree root; resolves to stdout, rejects unless git exits 0. Git never
 * looks for a repository above the root (its parent is the ceiling).
 */
export function gitInWorktree(
  root: string,
  args: string[],
  options: GitOptions = {},
): Promise<string> {
  return gitStdout(args, {
    cwd: root,
    ceiling: path.dirname(root),
    timeoutMs: ENGINE_GIT_TIMEOUT_MS,
    ...options,
  });
}

/** Like gitInWorktree, but resolves to null instead of failing (exit code != 0). */
async function tryGit(root: string, args: string[]): Promise<string | null> {
  try {
    return await gitInWorktree(root, args);
  } catch {
    return null;
  }
}

export interface WorktreeFiles {
  /**
   * Files of the worktree, POSIX, sorted: tracked (from the index) plus untracked non-ignored.
   * Tracked files deleted from disk are left out only when `deleted` was asked for; otherwise
   * the caller removes them (changedVsBase reports them as D).
   */
  present: string[];
  /** Tracked files missing from disk (empty unless asked for). */
  deleted: Set<string>;
  /** Untracked, non-ignored files. */
  untracked: Set<string>;
}

/**
 * One `git ls-files` call: every file of the worktree git would show (ignored ones left out).
 * `deleted: true` also finds tracked files missing from disk, which costs an lstat of every
 * tracked file; without it git reads only the index and walks directories for untracked files.
 */
export async function listWorktreeFileSets(
  root: string,
  options: { deleted?: boolean; signal?: AbortSignal } = {},
): Promise<WorktreeFiles> {
  const gitOptions = options.signal ? { signal: options.signal } : {};
  // Whether every path listed so far compares in UTF-8 order as JavaScript compares strings.
  let nativeOrder = true;
  const list = async (args: string[]): Promise<string[]> => {
    const output = await gitInWorktree(root, ['ls-files', '-z', ...args], gitOptions);
    nativeOrder &&= ordersAsUtf8(output);
    const files = output.split('\0');
    files.pop(); // after the last NUL (or the empty output's one empty string)
    return files;
  };
  // Separate calls run in parallel (and are faster than one `-t` listing).
  const [tracked, untrackedList, deletedList] = await Promise.all([
    list(['--cached']),
    list(['--others', '--exclude-standard']),
    options.deleted ? list(['--deleted']) : Promise.resolve([]),
  ]);
  const deleted = new Set(deletedList);
  const untracked = new Set(untrackedList);
  const kept = deleted.size === 0 ? tracked : tracked.filter((file) => !deleted.has(file));
  const compare = nativeOrder ? compareCodeUnits : compareUtf8;
  return { present: mergeSorted(kept, untrackedList, compare), deleted, untracked };
}

/**
 * Both lists (each sorted by bytes, as git prints them) as one list in UTF-8 byte order without
 * duplicates (--cached lists a path once per stage during a conflicted merge). Falls back to a
 * sort if either list turns out not to be in order. `compare`: compareCodeUnits when the paths
 * hold no code unit from U+D800 (path-order.ts, ordersAsUtf8), the same order in native code.
 */
export function mergeSorted(
  left: readonly string[],
  right: readonly string[],
  compare: (a: string, b: string) => number = compareUtf8,
): string[] {
  const out: string[] = [];
  let i = 0;
  let j = 0;
  let last: string | undefined;
  while (i < left.length || j < right.length) {
    const a = left[i];
    const b = right[j];
    let next: string;
    if (b === undefined || (a !== undefined && compare(a, b) <= 0)) {
      next = a as string;
      i++;
    } else {
      next = b;
      j++;
    }
    if (next === last) continue;
    if (last !== undefined && compare(next, last) < 0)
      return sortedUtf8(new Set([...left, ...right]));
    out.push(next);
    last = next;
  }
  return out;
}

/** Untracked, non-ignored files only (a directory walk; tracked files are not stat'ed). */
export async function listUntracked(root: string, signal?: AbortSignal): Promise<string[]> {
  const out = await gitInWorktree(
    root,
    ['ls-files', '-z', '--others', '--exclude-standard'],
    signal ? { signal } : {},
  );
  return out.split('\0').filter((file) => file !== '');
}

/** One changed path vs the base. */
export interface ChangedEntry {
  /** A, C, D, M, R, T, U, X or `?` (untracked). */
  status: string;
  path: string;
  /** Renames and copies: the path in the base. */
  from?: string;
}

export interface ChangedVsBase {
  entries: ChangedEntry[];
  /** Every path involved, both sides of renames, untracked files included; UTF-8 order, unique. */
  paths: string[];
  /** Paths that exist in the base but not in the working tree (deleted, renamed away). */
  gone: Set<string>;
}

/**
 * What changed between the base commit's tree and the working tree, for tracked files:
 * committed, staged and unstaged changes, deletions included, renames with both paths. One
 * `git diff --name-status -z -M` call. Add untracked files with withUntracked.
 */
export async function changedVsBase(
  root: string,
  baseSha: string,
  signal?: AbortSignal,
): Promise<ChangedEntry[]> {
  const out = await gitInWorktree(
    root,
    ['diff', '--name-status', '-z', '-M', '--no-ext-diff', '--no-textconv', baseSha, '--'],
    signal ? { signal } : {},
  );
  const fields = out.split('\0');
  const entries: ChangedEntry[] = [];
  for (let index = 0; index < fields.length;) {
    const status = fields[index++] ?? '';
    if (status === '') continue;
    const letter = status[0] ?? '?';
    if (letter === 'R' || letter === 'C') {
      const from = fields[index++] ?? '';
      const to = fields[index++] ?? '';
      entries.push({ status: letter, path: to, from });
    } else {
      entries.push({ status: letter, path: fields[index++] ?? '' });
    }
  }
  return entries;
}

/** The full changed set: tracked changes plus untracked files (status `?`). */
export function withUntracked(tracked: ChangedEntry[], untracked: Iterable<string>): ChangedVsBase {
  const entries = [...tracked];
  for (const file of untracked) entries.push({ status: '?', path: file });
  const paths = new Set<string>();
  const gone = new Set<string>();
  for (const entry of entries) {
    paths.add(entry.path);
    if (entry.status === 'D') gone.add(entry.path);
    if (entry.from !== undefined && entry.status === 'R') {
      paths.add(entry.from);
      gone.add(entry.from);
    }
  }
  return { entries, paths: sortedUtf8(paths), gone };
}

/**
 * Checks a client-supplied base and resolves it to a commit sha. A value starting with `-` (it
 * would be read as an option) or one that does not name a commit is a UserError.
 */
export async function resolveBase(root: string, base: string): Promise<string> {
  if (base.trim() === '') throw new UserError('base_branch is empty: name a branch, tag or commit');
  if (base.startsWith('-')) {
    throw new UserError(
      `base_branch must not start with "-" (it would be read as a git option): ${displayPath(base)}`,
    );
  }
  if (/[\0\n]/.test(base)) {
    throw new UserError(`base_branch contains a NUL or newline: ${displayPath(base)}`);
  }
  const out = await tryGit(root, [
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    `${base}^{commit}`,
  ]);
  const sha = out?.trim();
  if (!sha || !/^[0-9a-f]{40,64}$/.test(sha)) {
    throw new UserError(
      `base_branch does not resolve to a commit in this repository: ${displayPath(base)} ` +
        '(try a local branch such as "main", a remote branch such as "origin/main", or a sha)',
    );
  }
  return sha;
}

/** HEAD's sha, or null when HEAD names no commit yet (unborn branch), as NotarAI records it. */
export async function headSha(root: string): Promise<string | null> {
  return (await tryGit(root, ['rev-parse', '--verify', '--quiet', 'HEAD']))?.trim() || null;
}

/**
 * The current branch name, or null when HEAD is detached (what NotarAI's `git branch
 * --show-current` gives: nothing, recorded as null). An unborn branch has its name.
 */
export async function currentBranch(root: string): Promise<string | null> {
  const name = (await tryGit(root, ['symbolic-ref', '--quiet', '--short', 'HEAD']))?.trim();
  return name || null;
}

/**
 * The default base of a repository: `origin/HEAD`'s target if set, else `main`, else `master`,
 * else the current branch (HEAD when detached).
 */
export async function defaultBase(root: string): Promise<string> {
  const originHead = (
    await tryGit(root, ['symbolic-ref', '--quiet', 'refs/remotes/origin/HEAD'])
  )?.trim();
  if (originHead?.startsWith('refs/remotes/')) return originHead.slice('refs/remotes/'.length);
  for (const name of ['main', 'master']) {
    const found = await tryGit(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${name}`]);
    if (found?.trim()) return name;
  }
  return (await currentBranch(root)) ?? 'HEAD';
}

/** The repository's object format (`sha1` or `sha256`); `sha1` when git cannot say. */
export async function objectFormat(root: string): Promise<string> {
  return (await tryGit(root, ['rev-parse', '--show-object-format']))?.trim() || 'sha1';
}

/** Absolute paths of the git directory (this worktree's) and the common directory. */
export async function gitDirectories(root: string): Promise<{ gitDir: string; commonDir: string }> {
  const out = await gitInWorktree(root, [
    'rev-parse',
    '--path-format=absolute',
    '--git-dir',
    '--git-common-dir',
  ]);
  const [gitDir = '', commonDir = ''] = out.trim().split('\n');
  return { gitDir, commonDir };
}
