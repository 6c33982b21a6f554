// Where a worktree stands, for get_project_context: branch, HEAD commit and subject, upstream with
// ahead/behind, counts of changed and untracked files with the first few paths (one
// `git status --porcelain=v2 --branch -z`), and the repository's other worktrees
// (`git worktree list --porcelain -z`). Read-only queries through run-git.ts.
import { canonicalName } from '../confined-fs.ts';
import { parseWorktreeList } from './worktree-list.ts';
import { runGit, splitNul } from './run-git.ts';

export interface HeadCommit {
  commit: string;
  subject: string;
  /** Committer date, ISO 8601. */
  date: string;
}

export interface Upstream {
  name: string;
  /** Commits on the branch not on the upstream; null if git could not tell (upstream gone). */
  ahead: number | null;
  behind: number | null;
}

export interface WorkingTreeChanges {
  /** Tracked files with a staged or unstaged change (conflicts included). */
  changed: number;
  staged: number;
  unstaged: number;
  conflicted: number;
  untracked: number;
  /** The first few changed paths, in git's order. */
  changed_paths: string[];
  untracked_paths: string[];
}

export interface RepositoryStatus {
  /** Branch name, or null when HEAD is detached. */
  branch: string | null;
  /** Null in a repository without commits. */
  head: HeadCommit | null;
  upstream: Upstream | null;
  changes: WorkingTreeChanges;
}

export interface OtherWorktree {
  path: string;
  /** Null when its HEAD is detached. */
  branch: string | null;
  head: string | null;
  /** Its directory is gone (git would prune it). */
  missing: boolean;
}

interface GitQueryOptions {
  ceiling: string;
  signal?: AbortSignal;
  /** How many paths of each kind to keep. */
  samplePaths?: number;
}

/** Porcelain v2 fields before the path: "1 XY sub mH mI mW hH hI path" and friends. */
const FIELDS_BEFORE_PATH: Record<string, number> = { '1': 8, '2': 9, u: 10, '?': 1, '!': 1 };

function afterFields(record: string, count: number): string {
  let at = 0;
  for (let field = 0; field < count; field++) {
    at = record.indexOf(' ', at) + 1;
    if (at === 0) return '';
  }
  return record.slice(at);
}

/** Parses `git status --porcelain=v2 --branch -z` output. */
export function parseStatus(output: Buffer, samplePaths: number): Omit<RepositoryStatus, 'head'> {
  let branch: string | null = null;
  let upstream: Upstream | null = null;
  const changes: WorkingTreeChanges = {
    changed: 0,
    staged: 0,
    unstaged: 0,
    conflicted: 0,
    untracked: 0,
    changed_paths: [],
    untracked_paths: [],
  };
  const records = splitNul(output).map((record) => record.toString('utf8'));
  for (let index = 0; index < records.length; index++) {
    const record = records[index]!;
    const kind = record[0] ?? '';
    if (kind === '#') {
      const [, key, ...rest] = record.split(' ');
      const value = rest.join(' ');
      if (key === 'branch.head') branch = value === '(detached)' ? null : value;
      else if (key === 'branch.upstream') upstream = { name: value, ahead: null, behind: null };
      else if (key === 'branch.ab' && upstream) {
        const match = /^\+(\d+) -(\d+)$/.exec(value);
        if (match) {
          upstream.ahead = Number(match[1]);
          upstream.behind = Number(match[2]);
        }
      }
      continue;
    }
    const fields = FIELDS_BEFORE_PATH[kind];
    if (fields === undefined) continue;
    const filePath = afterFields(record, fields);
    if (kind === '2') index += 1; // a rename's original path is the next record
    if (kind === '?') {
      changes.untracked += 1;
      if (changes.untracked_paths.length < samplePaths) changes.untracked_paths.push(filePath);
      continue;
    }
    if (kind === '!') continue;
    changes.changed += 1;
    if (kind === 'u') {
      changes.conflicted += 1;
    } else {
      if (record[2] !== '.') changes.staged += 1;
      if (record[3] !== '.') changes.unstaged += 1;
    }
    if (changes.changed_paths.length < samplePaths) changes.changed_paths.push(filePath);
  }
  return { branch, upstream, changes };
}

/** Branch, HEAD, upstream and changes of the worktree at `root`; null if it is not a work tree. */
export async function repositoryStatus(
  root: string,
  options: GitQueryOptions,
): Promise<RepositoryStatus | null> {
  const common = { cwd: root, ceiling: options.ceiling, signal: options.signal };
  const [status, log] = await Promise.all([
    runGit(['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all'], common),
    runGit(['log', '-1', '--no-show-signature', '--format=%H%x00%s%x00%cI'], common),
  ]);
  if (status.code !== 0) return null;
  const parsed = parseStatus(status.stdout, options.samplePaths ?? 10);
  let head: HeadCommit | null = null;
  if (log.code === 0) {
    const [commit, subject, date] = log.stdout.toString('utf8').trimEnd().split('\0');
    if (commit) head = { commit, subject: subject ?? '', date: date ?? '' };
  }
  return { ...parsed, head };
}

/** The repository's worktrees other than `root` (real paths), main one first. */
export async function otherWorktrees(
  root: string,
  options: GitQueryOptions,
): Promise<OtherWorktree[] | null> {
  const output = await runGit(['worktree', 'list', '--porcelain', '-z'], {
    cwd: root,
    ceiling: options.ceiling,
    signal: options.signal,
  });
  if (output.code !== 0) return null;
  const listed = parseWorktreeList(output.stdout.toString('utf8'));
  const resolved = await Promise.all(
    listed.map(async (worktree) => ({
      path: await canonicalName(worktree.path),
      branch: worktree.branch,
      head: worktree.head,
      missing: worktree.missing,
    })),
  );
  return resolved.filter((worktree) => worktree.path !== root);
}
