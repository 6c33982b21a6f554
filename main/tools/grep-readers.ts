// How grep reads the files it searches, never leaving the worktree: files are opened through the
// confined layer's VerifiedDirectories (each directory proved to be its own real path under the
// root, the file opened relative to that directory's descriptor, O_NOFOLLOW | O_NONBLOCK). A
// symbolic link is never followed (skipped as `symlink`). Two flavours with the same rules: the
// synchronous reader for grep's worker threads (blocking there keeps the main event loop free and
// is several times faster than promise-based fs for many small files), and an asynchronous one for
// the main thread when workers are not available.
import { closeSync, fstatSync, readSync } from 'node:fs';
import { sandboxFile, VerifiedDirectories } from '../platform/confined-fs.ts';
import type { GrepChunkFile, ReadOutcome } from './grep-search.ts';

/** The directory part and the name of a file's path relative to the root, as bytes. */
function splitPath(file: GrepChunkFile): { directory: Buffer; name: Buffer } {
  const bytes = file.raw === undefined ? Buffer.from(file.path, 'utf8') : Buffer.from(file.raw);
  const slash = bytes.lastIndexOf(0x2f);
  if (slash === -1) return { directory: Buffer.alloc(0), name: bytes };
  return { directory: bytes.subarray(0, slash), name: bytes.subarray(slash + 1) };
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

/**
 * Opens a file for grep: in its directory proved to be its own real path under the root (strict:
 * grep never follows a symlink), read-only, never through a final symlink, never waiting on a FIFO.
 */
function openForGrep(
  directories: VerifiedDirectories,
  file: GrepChunkFile,
): { fd: number } | { outcome: ReadOutcome } {
  const { directory, name } = splitPath(file);
  try {
    const fd = directories.openFile(directory, name);
    return fd === null ? { outcome: { skipped: 'missing' } } : { fd };
  } catch (error) {
    return { outcome: skipFor(error) };
  }
}

/** The synchronous reader: for worker threads only. */
export function createSyncReader(root: string, maxFileBytes: number): ChunkReader {
  const directories = new VerifiedDirectories(root, { strict: true });
  return {
    read(file) {
      const opened = openForGrep(directories, file);
      if ('outcome' in opened) return opened.outcome;
      const { fd } = opened;
      try {
        const stats = fstatSync(fd);
        if (!stats.isFile()) return { skipped: 'not_a_file' };
        if (stats.size > maxFileBytes) return { skipped: 'too_large' };
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
      directories.close();
    },
  };
}

/** The asynchronous reader, same rules, for the main thread (reads yield to other work). */
export function createAsyncReader(root: string, maxFileBytes: number): ChunkReader {
  const directories = new VerifiedDirectories(root, { strict: true });
  return {
    async read(file) {
      const opened = openForGrep(directories, file);
      if ('outcome' in opened) return opened.outcome;
      const handle = sandboxFile(opened.fd);
      try {
        const stats = await handle.stat();
        if (!stats.isFile()) return { skipped: 'not_a_file' };
        if (stats.size > maxFileBytes) return { skipped: 'too_large' };
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
      directories.close();
    },
  };
}
