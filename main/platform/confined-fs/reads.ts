// Reading files inside the root: opened with O_NOFOLLOW | O_NONBLOCK, proved by descriptor, read
// with a cap; small reads synchronous within a per-turn budget.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { OPEN_FLAGS, descriptorPrefix, readAsync, stat, verifyOpened } from './descriptors.ts';
import type { OpenedDirectory, OpenedFile, SandboxFile } from './types.ts';
import { displayPath, errnoCode, fsRefusal, resolveInsideRoot } from './resolve.ts';

/** Bytes read synchronously per turn of the event loop before reads move to the thread pool. */
export const SYNC_READ_BUDGET = 256 * 1024;

let syncBudget = SYNC_READ_BUDGET;
let refillScheduled = false;

/** Takes `length` bytes from this turn's synchronous budget, if there are that many left. */
function takeSyncBudget(length: number): boolean {
  if (length > syncBudget) return false;
  syncBudget -= length;
  if (!refillScheduled) {
    refillScheduled = true;
    setImmediate(() => {
      syncBudget = SYNC_READ_BUDGET;
      refillScheduled = false;
    });
  }
  return true;
}

/** Wraps an open descriptor (opened by this layer) for reading; the caller closes it. */
export function sandboxFile(fd: number): SandboxFile {
  let closed = false;
  return {
    fd,
    async read(buffer, offset, length, position) {
      if (takeSyncBudget(length)) {
        return { bytesRead: readSync(fd, buffer, offset, length, position) };
      }
      const { bytesRead } = await readAsync(fd, buffer, offset, length, position);
      return { bytesRead };
    },
    stat: async () => fstatSync(fd),
    close: async () => {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

/**
 * Opens a regular file inside the root for reading. Refuses directories (pointing at
 * list_directory) and special files (FIFOs, sockets, devices).
 */
export async function openFileInsideRoot(root: string, requested: unknown): Promise<OpenedFile> {
  const checked = await resolveInsideRoot(root, requested);
  const shown = displayPath(requested as string);
  const before = await stat(checked.realPath).catch((error: unknown) => {
    throw fsRefusal(error, requested as string, shown);
  });
  if (before.isDirectory()) {
    throw new UserError(
      `is a directory, not a file: ${shown}; use list_directory to see what it contains`,
    );
  }
  if (!before.isFile()) {
    throw new UserError(
      `not a regular file (a FIFO, socket or device), refusing to read: ${shown}`,
    );
  }
  let handle: SandboxFile;
  try {
    handle = sandboxFile(openSync(checked.realPath, OPEN_FLAGS));
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') {
      throw new UserError(`path changed while it was being opened; try again: ${shown}`);
    }
    throw fsRefusal(error, requested as string, shown);
  }
  try {
    const stats = await handle.stat();
    verifyOpened(checked, handle.fd, stats, shown);
    if (!stats.isFile()) {
      throw new UserError(`not a regular file, refusing to read: ${shown}`);
    }
    return { ...checked, handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Opens a directory inside the root and hands it to `use`, closing it afterwards. The directory is
 * opened and verified first; on Linux its entries (and their lstat) are then read through the open
 * descriptor, so swapping the path for a symlink after the check cannot redirect the listing.
 */
export async function withDirectoryInsideRoot<T>(
  root: string,
  requested: unknown,
  use: (directory: OpenedDirectory) => Promise<T>,
): Promise<T> {
  const checked = await resolveInsideRoot(root, requested);
  const shown = displayPath(requested as string);
  const before = await stat(checked.realPath).catch((error: unknown) => {
    throw fsRefusal(error, requested as string, shown);
  });
  if (!before.isDirectory()) {
    throw new UserError(`not a directory: ${shown}; use read_file to read a file's contents`);
  }
  let handle: FileHandle;
  try {
    handle = await open(
      checked.realPath,
      constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0),
    );
  } catch (error) {
    if (errnoCode(error) === 'ELOOP' || errnoCode(error) === 'ENOTDIR') {
      throw new UserError(`path changed while it was being opened; try again: ${shown}`);
    }
    throw fsRefusal(error, requested as string, shown);
  }
  try {
    verifyOpened(checked, handle.fd, await handle.stat(), shown);
    const base = descriptorPrefix(handle.fd, checked.realPath);
    const dirents = await readdir(base, { withFileTypes: true, encoding: 'buffer' }).catch(
      (error: unknown) => {
        throw fsRefusal(error, requested as string, shown);
      },
    );
    const baseBytes = Buffer.from(base + path.sep);
    return await use({
      ...checked,
      entries: dirents.map((dirent) => ({
        name: dirent.name.toString('utf8'),
        rawName: dirent.name,
        dirent,
      })),
      // By bytes, so a name that is not valid UTF-8 still resolves.
      lstatEntry: (entry) =>
        lstat(Buffer.concat([baseBytes, entry.rawName])).catch(() => undefined),
    });
  } finally {
    await handle.close();
  }
}

// ---- Whole-file reads with a cap ---------------------------------------------------------------

/**
 * Reads a regular file inside the root, at most `maxBytes` of it: a bigger file (or one that grows
 * past the cap while read) is refused with a UserError naming the cap, never read further. Symlinks
 * inside the root are followed; anything else (outside, FIFO, device, directory) is refused.
 */
export async function readFileInsideRoot(
  root: string,
  requested: string,
  options: { maxBytes: number },
): Promise<Buffer> {
  const opened = await openFileInsideRoot(root, requested);
  const { maxBytes } = options;
  const tooBig = (): UserError =>
    new UserError(`file is larger than the ${maxBytes}-byte limit: ${displayPath(requested)}`);
  try {
    if (opened.stats.size > maxBytes) throw tooBig();
    // One byte more than the cap tells a file that grew since fstat from one that did not.
    const buffer = Buffer.allocUnsafe(Math.min(opened.stats.size, maxBytes) + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await opened.handle.read(
        buffer,
        filled,
        buffer.length - filled,
        filled,
      );
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > maxBytes) throw tooBig();
    return buffer.subarray(0, filled);
  } finally {
    await opened.handle.close();
  }
}

/** The first `length` bytes of a regular file inside the root (fewer if it is shorter). */
export async function readHeadInsideRoot(
  root: string,
  requested: string,
  length: number,
): Promise<Buffer> {
  const opened = await openFileInsideRoot(root, requested);
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await opened.handle.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await opened.handle.close();
  }
}
