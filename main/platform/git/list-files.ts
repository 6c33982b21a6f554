// Asks git which files a directory holds as git sees them: tracked files still on disk plus
// untracked files that are not ignored (.gitignore at any level, .git/info/exclude,
// core.excludesFile), in one pass of `git ls-files -z` per kind. Nested repositories and checked-out
// submodules are reported separately so the caller can list them with their own rules. Paths are
// relative to the directory, kept as bytes when they are not valid UTF-8.
import path from 'node:path';
import { runGit, splitNul } from './run-git.ts';

/** One path reported by git, relative to the listed directory, with "/" separators. */
export interface GitPath {
  /** Decoded as UTF-8; bytes that are not valid UTF-8 become U+FFFD. */
  path: string;
  /** The bytes as git reported them, kept only when `path` holds U+FFFD (lossy). */
  raw?: Buffer;
}

export interface GitFileListing {
  /** Tracked files (present on disk, with excludeDeleted) and untracked files, deduplicated. */
  files: GitPath[];
  /** Nested repositories and submodules (directories, no trailing slash): list them separately. */
  nestedRepositories: GitPath[];
}

export interface ListGitFilesOptions {
  /** git will not look for a repository in this directory or above it. */
  ceiling: string;
  /** Also list untracked files that git ignores (inside a directory that is itself ignored). */
  includeIgnored?: boolean;
  /**
   * Leave out tracked files deleted from the disk (costs git an lstat of every tracked file).
   * Without it they are listed, and whoever opens them finds them missing.
   */
  excludeDeleted?: boolean;
  signal?: AbortSignal;
}

const GITLINK_MODE = '160000';

/** NUL-terminated records; decoded in one pass unless some bytes are not valid UTF-8. */
function decodeRecords(output: Buffer): GitPath[] {
  const text = output.toString('utf8');
  if (!text.includes('\ufffd')) {
    const records = text.split('\0');
    records.pop(); // after the last NUL
    return records.map((record) => ({ path: record }));
  }
  return splitNul(output).map((raw) => {
    const decoded = raw.toString('utf8');
    return decoded.includes('\ufffd')
      ? { path: decoded, raw: Buffer.from(raw) }
      : { path: decoded };
  });
}

/** Part of a record (from `start` to `end` in characters; the prefix cut is always ASCII). */
function sliceRecord(record: GitPath, start: number, end?: number): GitPath {
  const path = record.path.slice(start, end);
  if (record.raw === undefined) return { path };
  const rawEnd = end === undefined ? record.raw.length : record.raw.length + end;
  return { path, raw: record.raw.subarray(start, rawEnd) };
}

/** A key that tells paths apart even when their lossy decodings collide. */
function asKey(record: GitPath): string {
  return record.raw === undefined ? record.path : `\0${record.raw.toString('latin1')}`;
}

/**
 * Lists the files of `directory` (inside a git work tree). Resolves to null when the directory is
 * not in a work tree, or git is missing or fails: the caller then walks the directory itself.
 */
export async function listGitFiles(
  directory: string,
  options: ListGitFilesOptions,
): Promise<GitFileListing | null> {
  const common = { cwd: directory, ceiling: options.ceiling, signal: options.signal };
  const [tracked, untracked, deleted] = await Promise.all([
    runGit(['ls-files', '-z', '--cached', '--stage'], common),
    runGit(
      ['ls-files', '-z', '--others', ...(options.includeIgnored ? [] : ['--exclude-standard'])],
      common,
    ),
    options.excludeDeleted ? runGit(['ls-files', '-z', '--deleted'], common) : undefined,
  ]);
  if (tracked.code !== 0 || untracked.code !== 0) return null;
  if (deleted !== undefined && deleted.code !== 0) return null;

  const gone = new Set(deleted === undefined ? [] : decodeRecords(deleted.stdout).map(asKey));
  const files: GitPath[] = [];
  const nestedRepositories: GitPath[] = [];

  // `<mode> <object> <stage>\t<path>`; an unmerged path appears once per stage, consecutively.
  let previous: string | undefined;
  for (const record of decodeRecords(tracked.stdout)) {
    const tab = record.path.indexOf('\t');
    if (tab === -1) continue;
    const entry = sliceRecord(record, tab + 1);
    if (entry.path === previous) continue;
    previous = entry.path;
    if (record.path.startsWith(GITLINK_MODE)) nestedRepositories.push(entry);
    else if (!gone.has(asKey(entry))) files.push(entry);
  }
  for (const record of decodeRecords(untracked.stdout)) {
    // A nested repository shows as its directory with a trailing slash.
    if (record.path.endsWith('/')) {
      nestedRepositories.push(sliceRecord(record, 0, -1));
    } else {
      files.push(record);
    }
  }
  return { files, nestedRepositories };
}

/** The ceiling to use for a nested repository at `directory`: its parent, so git looks nowhere else. */
export function nestedCeiling(directory: string): string {
  return path.dirname(directory);
}
