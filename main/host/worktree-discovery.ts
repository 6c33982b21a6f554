// Finds a repository's worktrees: given any path inside a worktree (main or linked), resolves the
// repository and lists every worktree with `git worktree list --porcelain -z`, main one first.
import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface DiscoveredWorktree {
  /** Absolute, symlink-resolved path of the worktree root. */
  path: string;
  /** Branch name (without refs/heads/), or null when HEAD is detached. */
  branch: string | null;
  /** HEAD commit, or null in a repository without commits. */
  head: string | null;
  isMain: boolean;
  /** True when git reports the worktree's directory as gone (`prunable`). */
  missing: boolean;
}

export interface DiscoveredRepo {
  /** The main worktree's path: the repository's identity in Grove. */
  path: string;
  worktrees: DiscoveredWorktree[];
}

/** A user-facing problem with a repository path (does not exist, is not a git repository...). */
export class RepoPathError extends Error {
  override name = 'RepoPathError';
}

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** Parses `git worktree list --porcelain -z` output. Bare entries are left out. */
export function parseWorktreeList(output: string): DiscoveredWorktree[] {
  const worktrees: DiscoveredWorktree[] = [];
  // Records are separated by an empty field (two NULs); fields are "key value" or "key".
  const records = output.split('\0\0');
  for (const [index, record] of records.entries()) {
    const fields = record.split('\0').filter((field) => field.length > 0);
    if (fields.length === 0) continue;
    const entry = new Map<string, string>();
    for (const field of fields) {
      const space = field.indexOf(' ');
      entry.set(
        space === -1 ? field : field.slice(0, space),
        space === -1 ? '' : field.slice(space + 1),
      );
    }
    const worktreePath = entry.get('worktree');
    if (!worktreePath || entry.has('bare')) continue;
    const branchRef = entry.get('branch');
    worktrees.push({
      path: worktreePath,
      branch: branchRef ? branchRef.replace(/^refs\/heads\//, '') : null,
      head: entry.get('HEAD') && !/^0+$/.test(entry.get('HEAD')!) ? entry.get('HEAD')! : null,
      isMain: index === 0, // git always lists the main worktree first
      missing: entry.has('prunable'),
    });
  }
  return worktrees;
}

/** Resolves `inputPath` (any directory inside a worktree) to its repository and worktrees. */
export async function discoverRepo(inputPath: string): Promise<DiscoveredRepo> {
  const absolute = path.resolve(inputPath);
  const info = await stat(absolute).catch(() => undefined);
  if (!info) throw new RepoPathError(`path does not exist: ${absolute}`);
  const directory = info.isDirectory() ? absolute : path.dirname(absolute);
  let output: string;
  try {
    // Fails outside a repository; inside a bare repository it succeeds but lists no worktree.
    await git(directory, ['rev-parse', '--git-dir']);
    output = await git(directory, ['worktree', 'list', '--porcelain', '-z']);
  } catch {
    throw new RepoPathError(`not a git repository: ${absolute}`);
  }
  const listed = parseWorktreeList(output);
  const worktrees = await Promise.all(
    listed.map(async (worktree) => ({
      ...worktree,
      path: await realpath(worktree.path).catch(() => worktree.path),
    })),
  );
  const main = worktrees.find((worktree) => worktree.isMain);
  if (!main) throw new RepoPathError(`repository has no working tree (bare?): ${absolute}`);
  return { path: main.path, worktrees };
}
