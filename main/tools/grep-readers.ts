// How grep opens the files it searches, never leaving the worktree: each directory on the way is
// opened and proved to be itself under the root (its real path, and the same inode as the open
// descriptor), then the file is opened with O_NOFOLLOW — on Linux relative to that directory's
// descriptor (/proc/self/fd/N/name), so nothing swapped in after the check can redirect the open. A
// symbolic link is never followed (skipped as `symlink`). Two flavours with the same rules: the
// synchronous reader for grep's worker threads (blocking there keeps the main event loop free and
// is several times faster than promise-based fs for many small files), and an asynchronous one for
// the main thread when workers are not available.
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { GrepChunkFile, ReadOutcome } from './grep-search.ts';

const FILE_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
const DIRECTORY_FLAGS =
  constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);

/** The directory part and the name of a file's path relative to the root, as bytes. */
function splitPath(file: GrepChunkFile): { directory: Buffer; name: Buffer } {
  const bytes = file.raw === undefined ? Buffer.from(file.path, 'utf8') : Buffer.from(file.raw);
  const slash = bytes.lastIndexOf(0x2f);
  if (slash === -1) return { directory: Buffer.alloc(0), name: bytes };
  return { directory: bytes.subarray(0, slash), name: bytes.subarray(slash + 1) };
}

function absolute(root: string, relative: Buffer): Buffer {
  if (relative.length === 0) return Buffer.from(root);
  const native =
    path.sep === '/' ? relative : Buffer.from(relative.toString('utf8').split('/').join(path.sep));
  return Buffer.concat([Buffer.from(root + path.sep), native]);
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function skipFor(error: unknown): ReadOutcome {
  const code = errorCode(error);
  if (code === 'ELOOP' || code === 'EMLINK') return { skipped: 'symlink' };
  if (code === 'ENOENT' || code === 'ENOTDIR') return { skipped: 'missing' };
  return { skipped: 'unreadable' };
}

export interface ChunkReader {
  read(file: GrepChunkFile): ReadOutcome | Promise<ReadOutcome>;
  /** Closes the directory descriptors it holds. */
  close(): void | Promise<void>;
}

let procFdAvailable: boolean | undefined;

/** The synchronous reader: for worker threads only. */
export function createSyncReader(root: string, maxFileBytes: number): ChunkReader {
  procFdAvailable ??= process.platform === 'linux' && existsSync('/proc/self/fd');
  const procFd = procFdAvailable;
  /** Directory bytes (latin1 key) -> open descriptor, or -1 if it is not provably inside. */
  const directories = new Map<string, number>();

  const openDirectory = (relative: Buffer): number => {
    const key = relative.toString('latin1');
    const known = directories.get(key);
    if (known !== undefined) return known;
    const expected = absolute(root, relative);
    let fd = -1;
    try {
      fd = openSync(expected, DIRECTORY_FLAGS);
      const opened = fstatSync(fd);
      const real = realpathSync(expected, { encoding: 'buffer' });
      const current = statSync(real);
      if (!real.equals(expected) || current.ino !== opened.ino || current.dev !== opened.dev) {
        closeSync(fd);
        fd = -1;
      }
    } catch {
      if (fd !== -1) closeSync(fd);
      fd = -1;
    }
    directories.set(key, fd);
    return fd;
  };

  return {
    read(file) {
      const { directory, name } = splitPath(file);
      const directoryFd = openDirectory(directory);
      if (directoryFd === -1) return { skipped: 'missing' };
      const target = procFd
        ? Buffer.concat([Buffer.from(`/proc/self/fd/${directoryFd}/`), name])
        : Buffer.concat([absolute(root, directory), Buffer.from(path.sep), name]);
      let fd: number;
      try {
        fd = openSync(target, FILE_FLAGS);
      } catch (error) {
        return skipFor(error);
      }
      try {
        const stats = fstatSync(fd);
        if (!stats.isFile()) return { skipped: 'not_a_file' };
        if (stats.size > maxFileBytes) return { skipped: 'too_large' };
        if (!procFd) {
          // Opened by path: the directory must still be itself now that the file is open.
          const expected = absolute(root, directory);
          if (!realpathSync(expected, { encoding: 'buffer' }).equals(expected)) {
            return { skipped: 'missing' };
          }
        }
        const data = Buffer.allocUnsafe(stats.size);
        let filled = 0;
        while (filled < data.length) {
          const count = readSync(fd, data, filled, data.length - filled, filled);
          if (count === 0) break;
          filled += count;
        }
        return { data: data.subarray(0, filled) };
      } catch (error) {
        return skipFor(error);
      } finally {
        closeSync(fd);
      }
    },
    close() {
      for (const fd of directories.values()) if (fd !== -1) closeSync(fd);
      directories.clear();
    },
  };
}

/** The asynchronous reader, same rules, for the main thread (slower on many files). */
export function createAsyncReader(root: string, maxFileBytes: number): ChunkReader {
  const directories = new Map<string, Promise<boolean>>();
  const verifyDirectory = (relative: Buffer): Promise<boolean> => {
    const key = relative.toString('latin1');
    let verdict = directories.get(key);
    if (verdict === undefined) {
      const expected = absolute(root, relative);
      verdict = realpath(expected, { encoding: 'buffer' }).then(
        (real) => real.equals(expected),
        () => false,
      );
      directories.set(key, verdict);
    }
    return verdict;
  };
  return {
    async read(file) {
      const { directory, name } = splitPath(file);
      if (!(await verifyDirectory(directory))) return { skipped: 'missing' };
      const directoryPath = absolute(root, directory);
      const target = Buffer.concat([directoryPath, Buffer.from(path.sep), name]);
      let handle;
      try {
        handle = await open(target, FILE_FLAGS);
      } catch (error) {
        return skipFor(error);
      }
      try {
        const stats = await handle.stat();
        if (!stats.isFile()) return { skipped: 'not_a_file' };
        if (stats.size > maxFileBytes) return { skipped: 'too_large' };
        // The directory must still be itself once the file is open.
        const again = await realpath(directoryPath, { encoding: 'buffer' }).catch(() => undefined);
        const current = await stat(target).catch(() => undefined);
        if (!again?.equals(directoryPath) || current?.ino !== stats.ino) {
          return { skipped: 'missing' };
        }
        const data = Buffer.allocUnsafe(stats.size);
        let filled = 0;
        while (filled < data.length) {
          const { bytesRead } = await handle.read(data, filled, data.length - filled, filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        return { data: data.subarray(0, filled) };
      } catch (error) {
        return skipFor(error);
      } finally {
        await handle.close();
      }
    },
    close() {
      directories.clear();
    },
  };
}
