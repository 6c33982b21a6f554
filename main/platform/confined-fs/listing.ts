// Listing helpers for the file tools' walks, and the worktree root itself.
import { type Dirent, type Stats } from 'node:fs';
import { lstat, open, readdir, realpath as realpathAsync } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { PROC_FD, descriptorPathBytes, descriptorPrefix, realpath, stat } from './descriptors.ts';
import { DIRECTORY_FLAGS } from './verified-directories.ts';

/**
 * The real path of a worktree root named by the host (the user chose it: trusted), or a UserError
 * when it is not a directory.
 */
export async function realWorktreeRoot(requested: string): Promise<string> {
  const info = await stat(requested).catch(() => undefined);
  if (!info?.isDirectory()) throw new UserError(`worktree directory not found: ${requested}`);
  return realpath(requested);
}

/** True if `absolute` is its own real path: nothing on the way is a symlink (and it exists). */
export async function resolvesToItself(absolute: string | Buffer): Promise<boolean> {
  if (typeof absolute === 'string') {
    return (await realpathAsync(absolute).catch(() => undefined)) === absolute;
  }
  const real = await realpathAsync(absolute, { encoding: 'buffer' }).catch(() => undefined);
  return real?.equals(absolute) ?? false;
}

/**
 * The entries of the directory at `absolute` (bytes; a path under the root), read through a
 * descriptor proved to be that very directory (no symlink anywhere on the way, nothing swapped in
 * since): names as bytes, types as readdir reports them (never following). Undefined when it is
 * missing, not a directory or not itself.
 */
export async function readDirectoryEntries(
  absolute: Buffer,
): Promise<Dirent<Buffer>[] | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(absolute, DIRECTORY_FLAGS);
  } catch {
    return undefined;
  }
  try {
    if (PROC_FD) {
      if (!descriptorPathBytes(handle.fd)?.equals(absolute)) return undefined;
    } else if (!(await resolvesToItself(absolute))) {
      return undefined;
    }
    return await readdir(descriptorPrefix(handle.fd, absolute.toString('utf8')), {
      withFileTypes: true,
      encoding: 'buffer',
    });
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * lstat (never following) of a POSIX path under the root whose directories a listing has already
 * verified; undefined when it is missing.
 */
export async function lstatListed(root: string, relative: string): Promise<Stats | undefined> {
  return lstat(path.join(root, ...relative.split('/'))).catch(() => undefined);
}

/**
 * The real path of `absolute` (symlinks resolved), or `absolute` itself when it cannot be
 * resolved. For naming paths (another worktree's directory), never for opening them.
 */
export async function canonicalName(absolute: string): Promise<string> {
  return realpathAsync(absolute).catch(() => absolute);
}
