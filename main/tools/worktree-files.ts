// The files under one sandboxed directory of the worktree, as the file tools see them: tracked files
// still on disk and untracked files git does not ignore (main/platform/git/list-files.ts), nested
// repositories and submodules listed with their own rules, everything when the directory is not in
// a git work tree. Nothing under `.git`, nothing reached through a symbolic link: every directory a
// path passes through is checked to resolve to itself inside the root. Used by search_files, grep
// and directory_tree.
import path from 'node:path';
import { checkIgnoredNames } from '../platform/git/check-ignore.ts';
import { listGitFiles, nestedCeiling, type GitPath } from '../platform/git/list-files.ts';
import {
  isGitName,
  readDirectoryEntries,
  resolvesToItself,
  type SandboxPath,
} from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';

/** Most files one listing returns; beyond that `truncated` is set. */
export const MAX_LISTED_FILES = 500_000;
/** How deep nested repositories inside nested repositories are followed. */
const MAX_NESTED_DEPTH = 4;

/** A file (or symlink, listed as git lists it) under the worktree root. */
export interface WorktreeFile {
  /** POSIX path relative to the worktree root (lossy UTF-8 if the name is not valid UTF-8). */
  path: string;
  /** Bytes of the path relative to the root, when `path` is lossy; open the file with these. */
  raw?: Buffer;
}

export interface WorktreeFileList {
  /** Sorted by path. */
  files: WorktreeFile[];
  /** False when the directory is not in a git work tree (then nothing is ignored). */
  gitAware: boolean;
  /** More than MAX_LISTED_FILES files: the rest were left out. */
  truncated: boolean;
  /** Paths left out because a directory on the way is a symbolic link (or vanished). */
  unverifiable: number;
}

export interface ListWorktreeFilesOptions {
  signal?: AbortSignal;
  maxFiles?: number;
  /** Also list tracked files deleted from the disk (cheaper; for callers that open every file). */
  includeDeleted?: boolean;
}

function hasGitSegment(relative: string): boolean {
  if (!/\.git/i.test(relative)) return false;
  return relative.split('/').some(isGitName);
}

function join(prefix: string, relative: GitPath): WorktreeFile {
  const joined = prefix + relative.path;
  if (relative.raw === undefined) return { path: joined };
  return { path: joined, raw: Buffer.concat([Buffer.from(prefix), relative.raw]) };
}

function comparePaths(a: WorktreeFile, b: WorktreeFile): number {
  if (a.path === b.path) return 0;
  return a.path < b.path ? -1 : 1;
}

/** Bytes (or text) of the directory part of a file's path, '' for the root. */
function directoryOf(file: WorktreeFile): string | Buffer {
  if (file.raw !== undefined) {
    const slash = file.raw.lastIndexOf(0x2f);
    return slash === -1 ? '' : file.raw.subarray(0, slash);
  }
  const slash = file.path.lastIndexOf('/');
  return slash === -1 ? '' : file.path.slice(0, slash);
}

/**
 * Keeps only files whose directory resolves to itself under the root: a tracked `a/b.txt` whose
 * directory `a` was replaced by a symbolic link (git still lists it from the index) is dropped.
 */
async function dropUnverifiable(root: string, files: WorktreeFile[]): Promise<WorktreeFile[]> {
  const rootBytes = Buffer.from(root + path.sep);
  // One pass: each file's directory key ('' for the root; raw bytes keyed apart).
  const keys = new Array<string>(files.length);
  const directories = new Map<string, string | Buffer>();
  for (let index = 0; index < files.length; index++) {
    const directory = directoryOf(files[index]!);
    const key = typeof directory === 'string' ? directory : `\0${directory.toString('latin1')}`;
    keys[index] = key;
    if (!directories.has(key)) directories.set(key, directory);
  }
  const rejected = new Set<string>();
  await Promise.all(
    [...directories].map(async ([key, directory]) => {
      if (directory.length === 0) return;
      const expected =
        typeof directory === 'string'
          ? path.join(root, ...directory.split('/'))
          : Buffer.concat([rootBytes, directory]);
      if (!(await resolvesToItself(expected))) rejected.add(key);
    }),
  );
  if (rejected.size === 0) return files;
  return files.filter((_file, index) => !rejected.has(keys[index]!));
}

/** Lists a directory that is not in a git work tree: every file, symlinks not followed. */
async function walk(
  root: string,
  start: SandboxPath,
  maxFiles: number,
  signal: AbortSignal | undefined,
): Promise<{ files: WorktreeFile[]; truncated: boolean }> {
  const files: WorktreeFile[] = [];
  const rootBytes = Buffer.from(root + path.sep);
  const pending: Buffer[] = [Buffer.from(start.realPath)];
  while (pending.length > 0) {
    if (signal?.aborted) throw new UserError('the listing was cancelled');
    const directory = pending.pop()!;
    const dirents = await readDirectoryEntries(directory);
    if (dirents === undefined) continue;
    for (const dirent of dirents) {
      const name = dirent.name.toString('utf8');
      if (isGitName(name)) continue;
      const full = Buffer.concat([directory, Buffer.from(path.sep), dirent.name]);
      if (dirent.isDirectory()) {
        pending.push(full);
      } else if (dirent.isFile() || dirent.isSymbolicLink()) {
        if (files.length >= maxFiles) return { files, truncated: true };
        const raw = full.subarray(rootBytes.length);
        const relative = raw.toString('utf8').split(path.sep).join('/');
        files.push(relative.includes('\ufffd') ? { path: relative, raw } : { path: relative });
      }
    }
  }
  return { files, truncated: false };
}

/**
 * The files under `base` (a directory checked by the sandbox), sorted by path. Inside a directory
 * that git ignores, everything is listed (as list_directory does).
 */
export async function listWorktreeFiles(
  root: string,
  base: SandboxPath,
  options: ListWorktreeFilesOptions = {},
): Promise<WorktreeFileList> {
  const maxFiles = options.maxFiles ?? MAX_LISTED_FILES;
  const ceiling = path.dirname(root);
  const { signal } = options;
  let includeIgnored = false;
  if (base.relativePath !== '.') {
    const ignore = await checkIgnoredNames(base.realPath, [], { ceiling, signal });
    includeIgnored = ignore?.directoryIgnored ?? false;
  }
  const excludeDeleted = !options.includeDeleted;
  const listing = await listGitFiles(base.realPath, {
    ceiling,
    includeIgnored,
    excludeDeleted,
    signal,
  });
  if (signal?.aborted) throw new UserError('the listing was cancelled');
  if (listing === null) {
    const walked = await walk(root, base, maxFiles, signal);
    const files = (await dropUnverifiable(root, walked.files)).sort(comparePaths);
    return { files, gitAware: false, truncated: walked.truncated, unverifiable: 0 };
  }

  const prefix = base.relativePath === '.' ? '' : `${base.relativePath}/`;
  const collected: WorktreeFile[] = listing.files.map((file) => join(prefix, file));
  let nested = listing.nestedRepositories.map((repository) => ({
    repository: join(prefix, repository),
    depth: 1,
  }));
  while (nested.length > 0 && collected.length < maxFiles) {
    const next: typeof nested = [];
    for (const { repository, depth } of nested) {
      // A nested repository whose name is not valid UTF-8 is left out (git needs its real name).
      if (hasGitSegment(repository.path) || repository.raw !== undefined) continue;
      const directory = path.join(root, ...repository.path.split('/'));
      // Only a directory that resolves to itself (not a symlink out) is listed.
      if (!(await resolvesToItself(directory))) continue;
      const inner = await listGitFiles(directory, {
        ceiling: nestedCeiling(directory),
        excludeDeleted,
        signal,
      });
      if (inner === null) continue; // an uninitialised submodule: an empty directory
      const innerPrefix = `${repository.path}/`;
      collected.push(...inner.files.map((file) => join(innerPrefix, file)));
      if (depth < MAX_NESTED_DEPTH) {
        next.push(
          ...inner.nestedRepositories.map((inside) => ({
            repository: join(innerPrefix, inside),
            depth: depth + 1,
          })),
        );
      }
    }
    nested = next;
  }
  if (signal?.aborted) throw new UserError('the listing was cancelled');

  const candidates = collected.filter((file) => !hasGitSegment(file.path));
  const verified = await dropUnverifiable(root, candidates);
  verified.sort(comparePaths);
  const truncated = verified.length > maxFiles;
  return {
    files: truncated ? verified.slice(0, maxFiles) : verified,
    gitAware: true,
    truncated,
    unverifiable: candidates.length - verified.length,
  };
}
