// Writes inside the root: never through a symlink, atomic (temp file + rename in the same
// verified directory).
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  mkdirSync,
  lstatSync,
  openSync,
  renameSync,
  unlinkSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { nodeCrypto } from '../builtins.ts';
import { PROC_FD, descriptorPrefix, writeAsync } from './descriptors.ts';
import { checkLexically, errnoCode, toRelativePosix } from './resolve.ts';
import { DIRECTORY_FLAGS } from './verified-directories.ts';

/** A directory of the worktree opened for writing: its entries resolve inside it. */
interface WritableDirectory {
  /** Real path (the root plus the segments walked: no symlink on the way). */
  readonly realPath: string;
  /** Where its entries resolve (/proc/self/fd/N on Linux, else the real path). */
  readonly prefix: string;
  close(): void;
}

/** Splits a Grove-chosen path relative to the root into checked segments. */
function writableSegments(root: string, relative: string): { segments: string[]; shown: string } {
  const target = checkLexically(root, relative);
  if (path.isAbsolute(relative) || target.wantsDirectory) {
    throw new UserError(`not a relative path inside the worktree: ${target.shown}`);
  }
  const segments = relative.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new UserError(`path must not contain "..": ${target.shown}`);
  return { segments, shown: target.shown };
}

/** Why `entry` (an existing name) cannot be used as a directory or written: words for the error. */
function describeEntry(entry: string): string {
  let stats: Stats;
  try {
    stats = lstatSync(entry);
  } catch {
    return 'changed while it was being opened';
  }
  if (stats.isSymbolicLink()) return 'is a symbolic link, which Grove never writes through';
  if (stats.isDirectory()) return 'is a directory';
  if (stats.isFile()) return 'is a file, not a directory';
  return 'is a special file (FIFO, socket or device)';
}

/**
 * Opens the directory `segments` below the root, each step relative to its verified parent and
 * never through a symlink; `create` makes missing directories (mode 0755). Undefined when a
 * directory is missing and `create` is false.
 */
function openWritableDirectory(
  root: string,
  segments: readonly string[],
  create: boolean,
  shown: string,
): WritableDirectory | undefined {
  let fd = openSync(root, DIRECTORY_FLAGS);
  let realPath = root;
  try {
    for (const segment of segments) {
      const entry = `${descriptorPrefix(fd, realPath)}/${segment}`;
      let child: number;
      try {
        child = openSync(entry, DIRECTORY_FLAGS);
      } catch (error) {
        const code = errnoCode(error);
        if (code === 'ENOENT' && create) {
          try {
            mkdirSync(entry, 0o755);
          } catch (mkdirError) {
            if (errnoCode(mkdirError) !== 'EEXIST') throw mkdirError;
          }
          child = openSync(entry, DIRECTORY_FLAGS); // a symlink raced in: ELOOP/ENOTDIR below
        } else if (code === 'ENOENT') {
          closeSync(fd);
          return undefined;
        } else if (code === 'ENOTDIR' || code === 'ELOOP') {
          throw new UserError(
            `cannot write ${shown}: ${toRelativePosix(root, path.join(realPath, segment))} ${describeEntry(entry)}`,
          );
        } else {
          throw error;
        }
      }
      closeSync(fd);
      fd = child;
      realPath = path.join(realPath, segment);
    }
    if (!PROC_FD) {
      // Without openat, prove at least that the path walked is still the directory opened.
      const opened = fstatSync(fd);
      const current = lstatSync(realPath);
      if (opened.ino !== current.ino || opened.dev !== current.dev) {
        throw new UserError(`cannot write ${shown}: a directory changed while it was being opened`);
      }
    }
  } catch (error) {
    closeSync(fd);
    if (error instanceof UserError) throw error;
    throw new UserError(`cannot write ${shown}: ${(error as Error).message}`);
  }
  const opened = fd;
  return {
    realPath,
    prefix: descriptorPrefix(opened, realPath),
    close: () => closeSync(opened),
  };
}

/** What is at a path inside the root, without following any symlink on the way or at the end. */
export type EntryKind = 'missing' | 'file' | 'directory' | 'symlink' | 'special';

/** The kind of an lstat result (undefined: missing). */
export function entryKind(stats: Stats | undefined): EntryKind {
  if (!stats) return 'missing';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  return 'special';
}

/**
 * lstat of a Grove-chosen path (relative to the root) whose directories are walked without
 * following symlinks. Undefined when it (or a directory on the way) is missing; a symlinked
 * directory on the way is a UserError.
 */
export function lstatNoFollowInsideRoot(root: string, relative: string): Stats | undefined {
  const { segments, shown } = writableSegments(root, relative);
  const name = segments.pop() as string;
  const directory = openWritableDirectory(root, segments, false, shown);
  if (!directory) return undefined;
  try {
    return lstatSync(`${directory.prefix}/${name}`);
  } catch {
    return undefined;
  } finally {
    directory.close();
  }
}

/** The kind of entry at a Grove-chosen path (see lstatNoFollowInsideRoot). */
export function entryKindInsideRoot(root: string, relative: string): EntryKind {
  return entryKind(lstatNoFollowInsideRoot(root, relative));
}

/**
 * Creates (if missing) the directory at a Grove-chosen path, never through a symlink, and returns
 * its real path. A symlink or a file where a directory should be is a UserError naming it.
 */
export function ensureDirectoryInsideRoot(root: string, relative: string): string {
  const { segments, shown } = writableSegments(root, relative);
  const directory = openWritableDirectory(root, segments, true, shown) as WritableDirectory;
  directory.close();
  return directory.realPath;
}

/**
 * Replaces a file at a Grove-chosen path atomically: written to a temp file in the same directory
 * (created O_EXCL, never through a symlink), flushed, then renamed over the target. Missing
 * directories are created. A symlink, directory or special file at the target is a UserError
 * naming it, and nothing is written. Returns the file's real path. `beforeRename`, when given, runs
 * once the data is on disk, right before the rename: it may throw to write nothing (a caller that
 * proves the target unchanged since it read it checks there, so the time spent writing and
 * flushing is no window for another process's write to be lost).
 */
export async function writeFileAtomicInsideRoot(
  root: string,
  relative: string,
  data: string | Buffer,
  options: { mode?: number; beforeRename?: () => Promise<void> | void } = {},
): Promise<string> {
  const { segments, shown } = writableSegments(root, relative);
  const name = segments.pop() as string;
  const directory = openWritableDirectory(root, segments, true, shown) as WritableDirectory;
  const target = `${directory.prefix}/${name}`;
  const temporary = `${directory.prefix}/.${name}.${nodeCrypto().randomBytes(6).toString('hex')}.tmp`;
  let created = false;
  try {
    const existing = entryKind(lstatSync(target, { throwIfNoEntry: false }));
    if (existing !== 'missing' && existing !== 'file') {
      throw new UserError(`cannot write ${shown}: it ${describeEntry(target)}`);
    }
    const fd = openSync(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
      options.mode ?? 0o644,
    );
    created = true;
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      let written = 0;
      while (written < bytes.length) {
        written += (await writeAsync(fd, bytes, written, bytes.length - written, written))
          .bytesWritten;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    await options.beforeRename?.();
    renameSync(temporary, target);
    created = false;
    return path.join(directory.realPath, name);
  } catch (error) {
    if (error instanceof UserError) throw error;
    throw new UserError(`cannot write ${shown}: ${(error as Error).message}`);
  } finally {
    if (created) {
      try {
        unlinkSync(temporary);
      } catch {
        // already gone
      }
    }
    directory.close();
  }
}

/**
 * Removes the file at a Grove-chosen path; a symlink there is removed itself (never its target).
 * False when nothing was there; a directory is a UserError.
 */
export function removeFileInsideRoot(root: string, relative: string): boolean {
  const { segments, shown } = writableSegments(root, relative);
  const name = segments.pop() as string;
  const directory = openWritableDirectory(root, segments, false, shown);
  if (!directory) return false;
  try {
    const target = `${directory.prefix}/${name}`;
    const kind = entryKind(lstatSync(target, { throwIfNoEntry: false }));
    if (kind === 'missing') return false;
    if (kind === 'directory') throw new UserError(`cannot remove ${shown}: it is a directory`);
    unlinkSync(target);
    return true;
  } catch (error) {
    if (error instanceof UserError) throw error;
    if (errnoCode(error) === 'ENOENT') return false;
    throw new UserError(`cannot remove ${shown}: ${(error as Error).message}`);
  } finally {
    directory.close();
  }
}

/**
 * lstat of several names in one directory at a Grove-chosen path, the directories walked without
 * following symlinks: one entry per name (undefined when missing), or undefined when the directory
 * itself is missing. A symlink or file where a directory should be is a UserError.
 */
export function lstatEntriesInsideRoot(
  root: string,
  relativeDirectory: string,
  names: readonly string[],
): (Stats | undefined)[] | undefined {
  const { segments, shown } = writableSegments(root, relativeDirectory);
  const directory = openWritableDirectory(root, segments, false, shown);
  if (!directory) return undefined;
  try {
    return names.map((name) => lstatSync(`${directory.prefix}/${name}`, { throwIfNoEntry: false }));
  } finally {
    directory.close();
  }
}
