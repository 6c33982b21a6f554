// Where Grove keeps what it can always compute again (the CLI's remembered spec validations and
// its last classification): the platform's per-user cache directory. Nothing there is needed: a
// cache that is missing, unreadable, read-only or not safely the user's only makes a command do
// the work itself, and no function here throws or waits on anything but a local file system call.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { sha256Hex } from './builtins.ts';

/**
 * `GROVE_CACHE_DIR` when set, else `$XDG_CACHE_HOME/grove` (default `~/.cache/grove`),
 * `~/Library/Caches/Grove` on macOS, `%LOCALAPPDATA%\Grove\Cache` on Windows. Only an absolute
 * path counts (the XDG rule for `XDG_CACHE_HOME`; an empty `HOME` gives none): a relative one would
 * name a directory under the current one, usually the worktree being checked, whose files the
 * repository could commit. Undefined when there is no absolute path to use.
 */
export function userCacheDirectory(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const absolute = (value: string | undefined) =>
    value !== undefined && value !== '' && path.isAbsolute(value) ? value : undefined;
  const override = absolute(env.GROVE_CACHE_DIR);
  if (override !== undefined) return override;
  const home = absolute(safeHomedir());
  if (platform === 'win32') {
    const local =
      absolute(env.LOCALAPPDATA) ??
      (home === undefined ? undefined : path.join(home, 'AppData', 'Local'));
    return local === undefined ? undefined : path.join(local, 'Grove', 'Cache');
  }
  if (platform === 'darwin') {
    return home === undefined ? undefined : path.join(home, 'Library', 'Caches', 'Grove');
  }
  const base =
    absolute(env.XDG_CACHE_HOME) ?? (home === undefined ? undefined : path.join(home, '.cache'));
  return base === undefined ? undefined : path.join(base, 'grove');
}

function safeHomedir(): string | undefined {
  try {
    return homedir();
  } catch {
    return undefined;
  }
}

/**
 * Whether `directory` is a directory (not a symlink) that only this user can change: owned by
 * us, not writable by group or others (POSIX). Another user could otherwise put files there (a
 * shared `XDG_CACHE_HOME=/tmp` with a `grove` directory someone made first).
 */
function isPrivateDirectory(directory: string): boolean {
  try {
    const stats = lstatSync(directory);
    if (!stats.isDirectory()) return false;
    if (process.platform === 'win32' || process.getuid === undefined) return true;
    return stats.uid === process.getuid() && (stats.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * The cache directory to use for a worktree at `root` (its real path): `directory` when it is an
 * absolute path outside the worktree, else undefined (nothing is remembered). A directory inside
 * the worktree would hold files the repository could commit. Outside means by its path and by the
 * real path it leads to (a symlink on the way, or an existing folder it would be made in, can
 * lead back into the worktree).
 */
function cacheDirectoryOutside(root: string, directory: string | undefined): string | undefined {
  if (directory === undefined || !path.isAbsolute(directory)) return undefined;
  const resolved = path.resolve(directory);
  const real = realPathOfNearest(resolved);
  if (real === undefined) return undefined;
  const isInside = (candidate: string) => {
    const fromRoot = path.relative(root, candidate);
    return (
      fromRoot === '' ||
      (fromRoot !== '..' && !fromRoot.startsWith(`..${path.sep}`) && !path.isAbsolute(fromRoot))
    );
  };
  return isInside(resolved) || isInside(real) ? undefined : directory;
}

/**
 * The real path `target` (absolute, normalized) has or would have once made: its nearest existing
 * ancestor's real path with the rest joined on; undefined when that cannot be read.
 */
function realPathOfNearest(target: string): string | undefined {
  const missing: string[] = [];
  let existing = target;
  for (;;) {
    try {
      return path.join(realpathSync.native(existing), ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = path.dirname(existing);
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === existing) return undefined;
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

/**
 * A cache file's bytes (`relative` to `directory`, the cache directory), or undefined when the
 * directory is not private (isPrivateDirectory) or the file is missing, not a regular file, bigger
 * than `maxBytes` or unreadable.
 */
function readCacheBytes(directory: string, relative: string, maxBytes: number): Buffer | undefined {
  if (!isPrivateDirectory(directory)) return undefined;
  try {
    const fd = openSync(
      path.join(directory, relative),
      constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0),
    );
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile() || stats.size > maxBytes) return undefined;
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * Writes a cache file whole: a new file renamed over the old one, so a reader sees one or the
 * other. The cache directory is created (0700) if its parent exists, and the file's own folder in
 * it, one level at a time (a recursive mkdir spins forever where a parent refuses children, as
 * /proc does). Returns false, and leaves the old file, when it cannot or the directory is not
 * private; never throws.
 */
function writeCacheFile(
  directory: string,
  relative: string,
  content: string | Uint8Array,
): boolean {
  const file = path.join(directory, relative);
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  let written = false;
  try {
    makeDirectory(directory);
    if (!isPrivateDirectory(directory)) return false;
    const folders = path
      .dirname(relative)
      .split(path.sep)
      .filter((part) => part !== '.');
    let folder = directory;
    for (const part of folders) makeDirectory((folder = path.join(folder, part)));
    writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
    written = true;
    renameSync(temporary, file);
    return true;
  } catch {
    if (written) {
      try {
        rmSync(temporary, { force: true });
      } catch {
        // Nothing more to do: the old file is whole.
      }
    }
    return false;
  }
}

/** mkdir of one level, 0700; an existing entry is left to the caller's checks. */
function makeDirectory(directory: string): void {
  try {
    mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * A cache file not written for this long is removed when another of its folder is written (one is
 * rewritten whenever what it remembers changes; one removed too early only costs the work again).
 */
export const CACHE_FILE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Removes the files of a cache folder (`relative` to `directory`) not written for `maxAgeMs`: a
 * cache keyed by worktree and build would otherwise keep one file for every checkout ever made.
 * Only regular files directly in it; never throws.
 */
function sweepCacheFolder(directory: string, relative: string, maxAgeMs: number): void {
  if (!isPrivateDirectory(directory)) return;
  const folder = path.join(directory, relative);
  const before = Date.now() - maxAgeMs;
  try {
    for (const name of readdirSync(folder)) {
      const file = path.join(folder, name);
      try {
        const stats = lstatSync(file);
        if (stats.isFile() && stats.mtimeMs < before) rmSync(file, { force: true });
      } catch {
        // Gone meanwhile, or not ours to remove.
      }
    }
  } catch {
    // No folder yet.
  }
}

/**
 * One cache file of a worktree: `<folder>/<SHA-256 of key and root><extension>` in the cache
 * directory, read and written whole (at most `maxBytes`), never when the directory lies inside the
 * worktree (cacheDirectoryOutside) or is not the user's alone. Writing one sweeps its folder of
 * files not written for CACHE_FILE_MAX_AGE_MS. Nothing here throws.
 */
export class WorktreeCacheFile {
  /** The cache directory; undefined: nothing is read or written (no safe place for it). */
  readonly #directory: string | undefined;
  readonly #folder: string;
  /** The file, relative to the cache directory. */
  readonly #file: string;
  readonly #maxBytes: number;

  /**
   * `root`: the worktree's real path; `key`: what else tells files of one worktree apart (a build,
   * a format); `directory`: the cache directory (userCacheDirectory(), or a test's).
   */
  constructor(options: {
    root: string;
    folder: string;
    key: string;
    extension: string;
    maxBytes: number;
    directory: string | undefined;
  }) {
    this.#directory = cacheDirectoryOutside(options.root, options.directory);
    this.#folder = options.folder;
    this.#file = path.join(
      options.folder,
      `${sha256Hex(`${options.key}\0${options.root}`)}${options.extension}`,
    );
    this.#maxBytes = options.maxBytes;
  }

  /** Whether there is a safe place for the file. */
  get usable(): boolean {
    return this.#directory !== undefined;
  }

  /** Its bytes, or undefined (missing, not a regular file, too big, unreadable, no safe place). */
  readBytes(): Buffer | undefined {
    return this.#directory === undefined
      ? undefined
      : readCacheBytes(this.#directory, this.#file, this.#maxBytes);
  }

  /** Its text (UTF-8), or undefined as readBytes. */
  readText(): string | undefined {
    return this.readBytes()?.toString('utf8');
  }

  /** Writes it whole when `content` is within the size cap, then sweeps old files of its folder. */
  write(content: string | Uint8Array): void {
    if (this.#directory === undefined) return;
    const size = typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength;
    if (size <= this.#maxBytes) writeCacheFile(this.#directory, this.#file, content);
    sweepCacheFolder(this.#directory, this.#folder, CACHE_FILE_MAX_AGE_MS);
  }
}
