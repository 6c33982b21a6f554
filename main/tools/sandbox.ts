// The worktree sandbox: the single place that turns a client-supplied path into a real path inside
// the worktree root, or throws a ToolError naming why not. It also opens files and directories
// for the file tools, re-checking identity after opening so a path swapped for a symlink between
// the check and the open is caught. Nothing outside the root, and nothing in `.git`, is ever
// opened through here.
//
// Path checks and small reads use synchronous calls on purpose: a realpath or stat served from the
// kernel's caches costs a few microseconds of the event loop, while the same call through libuv's
// thread pool costs ~100 µs of main-thread CPU in wake-ups and promise plumbing, which is what
// bounded read_file under load (docs/decisions.md, "Synchronous metadata calls in the sandbox").
// At most SYNC_READ_BUDGET bytes are read synchronously per turn of the event loop, whatever the
// number of files; further reads go through the thread pool (and so yield), so neither a large
// file nor a call reading many files holds the loop (the host's health check would take the
// process for hung).
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  read,
  readSync,
  readlinkSync,
  realpathSync,
  statSync,
  type Dirent,
  type Stats,
} from 'node:fs';
import { access, lstat, open, readdir } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ToolError } from './tool-definition.ts';

const readAsync = promisify(read);
/** One realpath(3) call (libuv's), as fs/promises' realpath, without the thread-pool trip. */
const realpath = async (target: string): Promise<string> => realpathSync.native(target);
const stat = async (target: string): Promise<Stats> => statSync(target);
const lstatNow = async (target: string): Promise<Stats> => lstatSync(target);
const readlink = async (target: string): Promise<string> => readlinkSync(target);

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

/** An open regular file, read-only: what the file tools read through. */
export interface SandboxFile {
  readonly fd: number;
  /** Reads into `buffer` at `offset` up to `length` bytes from `position`. */
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  /** Closes the descriptor; later calls do nothing. */
  close(): Promise<void>;
}

function sandboxFile(fd: number): SandboxFile {
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

/** Longest path (in UTF-16 code units) a client may pass. */
export const MAX_PATH_LENGTH = 4096;

/** Most symlinks followed by hand when explaining a dangling link. */
const MAX_LINK_HOPS = 40;

/** A path that has been checked: it exists, and its real path is the root or under it. */
export interface SandboxPath {
  /** Real absolute path (symlinks resolved), at or under the root. */
  readonly realPath: string;
  /** POSIX path relative to the root; '.' for the root itself. */
  readonly relativePath: string;
}

export interface OpenedFile extends SandboxPath {
  /** Open read-only file; the caller must close it. */
  readonly handle: SandboxFile;
  /** fstat of the handle (a regular file). */
  readonly stats: Stats;
}

/** One directory entry. */
export interface DirectoryEntry {
  /** The name decoded as UTF-8 (bytes that are not valid UTF-8 become U+FFFD). */
  readonly name: string;
  /** The name's bytes as stored on disk. */
  readonly rawName: Buffer;
  /** Type as reported by readdir (never follows a symlink). */
  readonly dirent: Dirent<Buffer>;
}

export interface OpenedDirectory extends SandboxPath {
  /** Raw entries, `.git` included: filtering is the caller's job. */
  readonly entries: DirectoryEntry[];
  /** lstat of an entry (never follows a symlink); undefined if it vanished meanwhile. */
  lstatEntry(entry: DirectoryEntry): Promise<Stats | undefined>;
}

/** True if `candidate` is `root` or under it, compared by path segments (never a string prefix). */
export function isInsideRoot(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  if (relative === '') return true;
  if (path.isAbsolute(relative)) return false; // another drive on Windows
  const first = relative.split(path.sep)[0];
  return first !== '..';
}

/** POSIX path of `candidate` relative to `root` ('.' for the root). `candidate` must be inside. */
export function toRelativePosix(root: string, candidate: string): string {
  const relative = path.relative(root, candidate);
  if (relative === '') return '.';
  return relative.split(path.sep).join('/');
}

/** Quotes a client path for an error message: JSON-escaped (NUL shows as \u0000), shortened. */
export function displayPath(requested: string): string {
  const shown = requested.length > 200 ? `${requested.slice(0, 200)}…` : requested;
  return JSON.stringify(shown);
}

/** A `.git` name, also in the spellings that alias it on case-insensitive or Windows disks. */
export function isGitName(segment: string): boolean {
  return /^\.git[. ]*$/i.test(segment);
}

function hasGitSegment(relative: string): boolean {
  return relative.split(/[\\/]/).some(isGitName);
}

function gitRefusal(shown: string, viaSymlink: boolean): ToolError {
  return new ToolError(
    viaSymlink
      ? `path resolves into .git through a symbolic link, and .git is not readable: ${shown}`
      : `path is inside .git, which is not readable: ${shown}`,
  );
}

function symlinkEscape(shown: string): ToolError {
  return new ToolError(
    'path resolves outside the worktree root through a symbolic link, which is not allowed: ' +
      shown,
  );
}

interface LexicalTarget {
  /** Absolute, normalised, not yet symlink-resolved. */
  absolute: string;
  /** The client wrote a trailing separator or `/.`: the target must be a directory. */
  wantsDirectory: boolean;
  /** Quoted for messages. */
  shown: string;
}

/** Checks the text of the path; never touches the file system. */
function checkLexically(root: string, requested: unknown): LexicalTarget {
  if (typeof requested !== 'string') {
    throw new ToolError(
      `path must be a string, got ${requested === null ? 'null' : typeof requested}`,
    );
  }
  if (requested.length === 0) {
    throw new ToolError('path is empty; use "." for the worktree root');
  }
  const shown = displayPath(requested);
  if (requested.includes('\0')) {
    throw new ToolError(`path contains a NUL byte, which is not allowed: ${shown}`);
  }
  if (requested.length > MAX_PATH_LENGTH) {
    throw new ToolError(
      `path is too long (${requested.length} characters; the limit is ${MAX_PATH_LENGTH}): ` +
        shown,
    );
  }
  const segments = requested.split(/[\\/]/);
  const last = segments.at(-1);
  const wantsDirectory = last === '' || last === '.' || last === '..';

  if (path.isAbsolute(requested)) {
    return { absolute: path.resolve(requested), wantsDirectory, shown };
  }
  // Walk the segments: `..` may never climb above the root, not even on the way to a path that
  // ends up inside it. Backslashes count as separators here (as they do on Windows), so `..\x`
  // is refused everywhere rather than treated as an odd file name.
  let depth = 0;
  for (const segment of segments) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      depth -= 1;
      if (depth < 0) {
        throw new ToolError(`path escapes the worktree root with "..": ${shown}`);
      }
    } else {
      depth += 1;
    }
  }
  if (segments.some(isGitName)) throw gitRefusal(shown, false);
  return { absolute: path.resolve(root, requested), wantsDirectory, shown };
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Turns a file-system failure on a checked path into a ToolError a model can act on. */
function fsRefusal(error: unknown, requested: string, shown: string): ToolError {
  switch (errnoCode(error)) {
    case 'ENOENT':
    case 'ENOTDIR': {
      let hint = '';
      if (/^~($|[\\/])/.test(requested))
        hint = ' (paths are relative to the worktree root; ~ is not expanded)';
      else if (/%[0-9a-f]{2}/i.test(requested)) hint = ' (percent-encoding is not decoded)';
      return new ToolError(`no such file or directory in the worktree: ${shown}${hint}`);
    }
    case 'ELOOP':
      return new ToolError(`too many levels of symbolic links: ${shown}`);
    case 'ENAMETOOLONG':
      return new ToolError(`path or one of its names is too long for the file system: ${shown}`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`permission denied: ${shown}`);
    default:
      return new ToolError(
        `cannot access ${shown}: ${error instanceof Error ? error.message : String(error)}`,
      );
  }
}

/**
 * The path does not exist. Before saying so, make sure it does not reach outside through a symlink
 * (a link to an outside directory, or a dangling link to an outside target): "not found" must never
 * tell the client anything about what is or is not outside the root.
 */
async function explainMissing(
  root: string,
  absolute: string,
  requested: string,
  shown: string,
  error: unknown,
): Promise<never> {
  let probe = absolute;
  while (probe !== root && isInsideRoot(root, probe)) {
    let probeStats: Stats;
    try {
      probeStats = await lstatNow(probe);
    } catch {
      probe = path.dirname(probe);
      continue;
    }
    // `probe` is the deepest existing ancestor (possibly a symlink).
    let resolved: string | undefined;
    try {
      resolved = await realpath(probe);
    } catch {
      resolved = undefined;
    }
    if (resolved !== undefined) {
      if (!isInsideRoot(root, resolved)) throw symlinkEscape(shown);
      if (hasGitSegment(path.relative(root, resolved))) throw gitRefusal(shown, true);
    } else if (probeStats.isSymbolicLink()) {
      await checkDanglingLink(root, probe, shown);
    }
    break;
  }
  throw fsRefusal(error, requested, shown);
}

/** Follows a dangling chain of links by hand; refuses if any hop points outside the root. */
async function checkDanglingLink(root: string, link: string, shown: string): Promise<void> {
  let current = link;
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    let target: string;
    try {
      const parent = await realpath(path.dirname(current));
      target = path.resolve(parent, await readlink(current));
    } catch {
      return;
    }
    if (!isInsideRoot(root, target)) throw symlinkEscape(shown);
    if (hasGitSegment(path.relative(root, target))) throw gitRefusal(shown, true);
    try {
      if (!(await lstatNow(target)).isSymbolicLink()) return;
    } catch {
      return;
    }
    current = target;
  }
}

/**
 * Resolves a client path to a real path inside `root` (itself a real path), or throws ToolError.
 * Relative paths are relative to the root; absolute paths are accepted only if they resolve
 * inside it. Symlinks are followed, and the final real path must be inside the root and not in
 * `.git`. Percent-encoding and `~` are not interpreted.
 */
export async function resolveInsideRoot(root: string, requested: unknown): Promise<SandboxPath> {
  const target = checkLexically(root, requested);
  const text = requested as string;
  const { shown } = target;
  let { absolute } = target;

  if (!isInsideRoot(root, absolute)) {
    // Only absolute paths get here (relative ones cannot climb out, checked above). Accept one
    // that names the root through another spelling (a symlinked parent); otherwise refuse with
    // the same message whether or not it exists, so nothing is learnt about the outside.
    let aliased: string | undefined;
    try {
      aliased = await realpath(absolute);
    } catch {
      aliased = undefined;
    }
    if (aliased === undefined || !isInsideRoot(root, aliased)) {
      throw new ToolError(`absolute path is outside the worktree root: ${shown}`);
    }
    absolute = aliased;
  }
  if (hasGitSegment(path.relative(root, absolute))) throw gitRefusal(shown, false);

  let real: string;
  try {
    real = await realpath(absolute);
  } catch (error) {
    return explainMissing(root, absolute, text, shown, error);
  }
  if (!isInsideRoot(root, real)) throw symlinkEscape(shown);
  if (hasGitSegment(path.relative(root, real))) throw gitRefusal(shown, true);

  if (target.wantsDirectory) {
    const stats = await stat(real).catch((error: unknown) => {
      throw fsRefusal(error, text, shown);
    });
    if (!stats.isDirectory()) {
      throw new ToolError(`not a directory (the path ends with a separator): ${shown}`);
    }
  }
  return { realPath: real, relativePath: toRelativePosix(root, real) };
}

/** A checked path with its stat (symlinks followed): a file, a directory or something else. */
export interface StattedPath extends SandboxPath {
  readonly stats: Stats;
}

/**
 * Resolves a path inside the root that must exist and stats it (following symlinks, which the
 * check already proved stay inside). For tools that take a file or a directory without opening it.
 */
export async function statInsideRoot(root: string, requested: unknown): Promise<StattedPath> {
  const checked = await resolveInsideRoot(root, requested);
  const stats = await stat(checked.realPath).catch((error: unknown) => {
    throw fsRefusal(error, requested as string, displayPath(requested as string));
  });
  return { ...checked, stats };
}

/** Like statInsideRoot, but the path must be a directory; `hint` says what to do instead. */
export async function resolveDirectoryInsideRoot(
  root: string,
  requested: unknown,
  hint: string,
): Promise<StattedPath> {
  const checked = await statInsideRoot(root, requested);
  if (!checked.stats.isDirectory()) {
    throw new ToolError(`not a directory: ${displayPath(requested as string)}; ${hint}`);
  }
  return checked;
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * After opening `checked.realPath`, proves the handle is that file: the path still resolves to
 * itself (no symlink swapped in on the way) and names the same inode as the handle.
 */
async function verifyOpened(checked: SandboxPath, opened: Stats, shown: string): Promise<void> {
  let again: string;
  let current: Stats;
  try {
    again = await realpath(checked.realPath);
    current = await stat(again);
  } catch {
    throw new ToolError(`path changed while it was being opened; try again: ${shown}`);
  }
  if (again !== checked.realPath || current.dev !== opened.dev || current.ino !== opened.ino) {
    throw new ToolError(`path changed while it was being opened; try again: ${shown}`);
  }
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
    throw new ToolError(
      `is a directory, not a file: ${shown}; use list_directory to see what it contains`,
    );
  }
  if (!before.isFile()) {
    throw new ToolError(
      `not a regular file (a FIFO, socket or device), refusing to read: ${shown}`,
    );
  }
  let handle: SandboxFile;
  try {
    handle = sandboxFile(openSync(checked.realPath, OPEN_FLAGS));
  } catch (error) {
    if (errnoCode(error) === 'ELOOP') {
      throw new ToolError(`path changed while it was being opened; try again: ${shown}`);
    }
    throw fsRefusal(error, requested as string, shown);
  }
  try {
    const stats = await handle.stat();
    await verifyOpened(checked, stats, shown);
    if (!stats.isFile()) {
      throw new ToolError(`not a regular file, refusing to read: ${shown}`);
    }
    return { ...checked, handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

let procFdAvailable: Promise<boolean> | undefined;

/** Linux exposes open descriptors as /proc/self/fd/N, which lets us read a directory by fd. */
function hasProcFd(): Promise<boolean> {
  procFdAvailable ??=
    process.platform === 'linux'
      ? access('/proc/self/fd').then(
          () => true,
          () => false,
        )
      : Promise.resolve(false);
  return procFdAvailable;
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
    throw new ToolError(`not a directory: ${shown}; use read_file to read a file's contents`);
  }
  let handle: FileHandle;
  try {
    handle = await open(
      checked.realPath,
      constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0),
    );
  } catch (error) {
    if (errnoCode(error) === 'ELOOP' || errnoCode(error) === 'ENOTDIR') {
      throw new ToolError(`path changed while it was being opened; try again: ${shown}`);
    }
    throw fsRefusal(error, requested as string, shown);
  }
  try {
    await verifyOpened(checked, await handle.stat(), shown);
    const base = (await hasProcFd()) ? `/proc/self/fd/${handle.fd}` : checked.realPath;
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
