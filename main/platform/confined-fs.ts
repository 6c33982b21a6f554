// The confined file layer: every read, stat, listing and write Grove does in a worktree goes
// through here (docs/security.md). A worktree is untrusted input: committed symlinks, FIFOs,
// devices, huge files and paths swapped between a check and an open can sit anywhere. So:
//   - a path is resolved inside the root by segments (never a string prefix), `.git` refused;
//   - files are opened with O_NOFOLLOW | O_NONBLOCK (a FIFO cannot hang us) and the open handle is
//     checked with fstat (regular files only unless a directory is asked for);
//   - the handle, not the path, is proved to be the file checked: on Linux the kernel's own name
//     for the descriptor (/proc/self/fd/N) must be the checked real path, so nothing swapped in
//     between the check and the open is ever read; elsewhere the path is resolved again and must
//     name the same inode;
//   - reads have a size cap per call;
//   - writes never go through a symlink: each directory on the way is opened with O_NOFOLLOW
//     relative to its verified parent (openat through /proc/self/fd on Linux), the file is written
//     to a temp file in that same directory and renamed over the target (atomic), and a symlink or
//     special file at the target is an error naming it.
// ESLint keeps `node:fs` out of every other module of the worktree process (eslint.config.js).
//
// Path checks and small reads use synchronous calls on purpose: a realpath or stat served from the
// kernel's caches costs a few microseconds of the event loop, while the same call through libuv's
// thread pool costs ~100 µs of main-thread CPU in wake-ups and promise plumbing, which is what
// bounded read_file under load (docs/decisions.md, "Synchronous metadata calls in the sandbox").
// At most SYNC_READ_BUDGET bytes are read synchronously per turn of the event loop, whatever the
// number of files; further reads go through the thread pool (and so yield), so neither a large
// file nor a call reading many files holds the loop (the host's health check would take the
// process for hung).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  lstatSync,
  openSync,
  read,
  readSync,
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  write,
  type Dirent,
  type Stats,
} from 'node:fs';
import { lstat, open, readdir, realpath as realpathAsync } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { UserError } from './errors.ts';

const readAsync = promisify(read);
const writeAsync = promisify(write);
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

function gitRefusal(shown: string, viaSymlink: boolean): UserError {
  return new UserError(
    viaSymlink
      ? `path resolves into .git through a symbolic link, and .git is not readable: ${shown}`
      : `path is inside .git, which is not readable: ${shown}`,
  );
}

function symlinkEscape(shown: string): UserError {
  return new UserError(
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
    throw new UserError(
      `path must be a string, got ${requested === null ? 'null' : typeof requested}`,
    );
  }
  if (requested.length === 0) {
    throw new UserError('path is empty; use "." for the worktree root');
  }
  const shown = displayPath(requested);
  if (requested.includes('\0')) {
    throw new UserError(`path contains a NUL byte, which is not allowed: ${shown}`);
  }
  if (requested.length > MAX_PATH_LENGTH) {
    throw new UserError(
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
        throw new UserError(`path escapes the worktree root with "..": ${shown}`);
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

/** Turns a file-system failure on a checked path into a UserError a model can act on. */
function fsRefusal(error: unknown, requested: string, shown: string): UserError {
  switch (errnoCode(error)) {
    case 'ENOENT':
    case 'ENOTDIR': {
      let hint = '';
      if (/^~($|[\\/])/.test(requested))
        hint = ' (paths are relative to the worktree root; ~ is not expanded)';
      else if (/%[0-9a-f]{2}/i.test(requested)) hint = ' (percent-encoding is not decoded)';
      return new UserError(`no such file or directory in the worktree: ${shown}${hint}`);
    }
    case 'ELOOP':
      return new UserError(`too many levels of symbolic links: ${shown}`);
    case 'ENAMETOOLONG':
      return new UserError(`path or one of its names is too long for the file system: ${shown}`);
    case 'EACCES':
    case 'EPERM':
      return new UserError(`permission denied: ${shown}`);
    default:
      return new UserError(
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
 * Resolves a client path to a real path inside `root` (itself a real path), or throws UserError.
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
      throw new UserError(`absolute path is outside the worktree root: ${shown}`);
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
      throw new UserError(`not a directory (the path ends with a separator): ${shown}`);
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
    throw new UserError(`not a directory: ${displayPath(requested as string)}; ${hint}`);
  }
  return checked;
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Linux names every open descriptor in /proc/self/fd: what the handle is, asked of the kernel. */
const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

/**
 * The kernel's path of an open descriptor (Linux), undefined where it cannot tell. A file deleted
 * since it was opened reads "<path> (deleted)", which never equals a checked path.
 */
function descriptorPath(fd: number): string | undefined {
  if (!PROC_FD) return undefined;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** A path under which names resolve inside the open directory `fd` (openat's effect). */
function descriptorPrefix(fd: number, realPath: string): string {
  return PROC_FD ? `/proc/self/fd/${fd}` : realPath;
}

/**
 * After opening `checked.realPath`, proves the handle is that file. On Linux the descriptor's own
 * path must be the checked real path (no second lookup of the path: nothing swapped in between
 * can pass); elsewhere the path must still resolve to itself and name the handle's inode.
 */
function verifyOpened(checked: SandboxPath, fd: number, opened: Stats, shown: string): void {
  const changed = (): UserError =>
    new UserError(`path changed while it was being opened; try again: ${shown}`);
  if (PROC_FD) {
    if (descriptorPath(fd) !== checked.realPath) throw changed();
    return;
  }
  let again: string;
  let current: Stats;
  try {
    again = realpathSync.native(checked.realPath);
    current = statSync(again);
  } catch {
    throw changed();
  }
  if (again !== checked.realPath || current.dev !== opened.dev || current.ino !== opened.ino) {
    throw changed();
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

// ---- Verified directories, for the worker threads' many small opens ----------------------------

const DIRECTORY_FLAGS =
  constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);
/** Read-only, never through a final symlink, never waiting on a FIFO. */
export const FILE_OPEN_FLAGS = OPEN_FLAGS;

interface VerifiedDirectory {
  /** Where its entries resolve through the open descriptor (ends with a separator). */
  prefix: Buffer;
  fd: number;
  /** Its real path, ending with a separator. */
  real: Buffer;
}

/**
 * Opens the directories of many files once each, proved inside the root, so that every file is
 * then opened relative to its directory's descriptor (/proc/self/fd/N/name on Linux): a directory
 * swapped for a symlink after the check cannot redirect an open. Synchronous, for worker threads
 * (grep, hashing). At most `maxOpen` directory descriptors are held at a time.
 */
export class VerifiedDirectories {
  readonly #root: string;
  readonly #rootBytes: Buffer;
  readonly #strict: boolean;
  readonly #maxOpen: number;
  /** Directory key -> prefix for its entries, or null when it is not provably inside. */
  readonly #known = new Map<string, VerifiedDirectory | null>();

  /**
   * `strict`: a directory must be its own real path (no symlink anywhere under the root, as grep
   * wants); otherwise symlinks that stay inside the root are followed (mark_reconciled's rule).
   */
  constructor(root: string, options: { strict: boolean; maxOpen?: number }) {
    this.#root = root;
    this.#rootBytes = Buffer.from(root);
    this.#strict = options.strict;
    this.#maxOpen = options.maxOpen ?? 64;
  }

  /**
   * The prefix (bytes, ending with a separator) under which the entries of `relativeDirectory`
   * (bytes of a POSIX path relative to the root, empty for the root) resolve, or null when the
   * directory is missing, in `.git`, or not provably inside the root.
   */
  prefix(relativeDirectory: Buffer): Buffer | null {
    return this.#directory(relativeDirectory)?.prefix ?? null;
  }

  #directory(relativeDirectory: Buffer): VerifiedDirectory | null {
    const key = relativeDirectory.toString('latin1');
    const known = this.#known.get(key);
    if (known !== undefined) return known;
    const verified = this.#open(relativeDirectory);
    if (verified !== null && this.#known.size >= this.#maxOpen) this.#evictOne();
    this.#known.set(key, verified);
    return verified;
  }

  /** Opens `name` (bytes) in a verified directory: read-only, no final symlink, no FIFO wait. */
  openFile(relativeDirectory: Buffer, name: Buffer): number | null {
    const prefix = this.prefix(relativeDirectory);
    if (prefix === null) return null;
    return openSync(Buffer.concat([prefix, name]), FILE_OPEN_FLAGS);
  }

  /**
   * lstat of `name` in a verified directory (never follows it); undefined if it is missing, null
   * when the directory is not provably inside. Metadata only, so it goes by the directory's real
   * path (cheaper than through /proc): content is only ever read through openFile.
   */
  lstat(relativeDirectory: Buffer, name: Buffer): Stats | undefined | null {
    const directory = this.#directory(relativeDirectory);
    if (directory === null) return null;
    return lstatSync(Buffer.concat([directory.real, name]), { throwIfNoEntry: false });
  }

  close(): void {
    for (const entry of this.#known.values()) if (entry) closeSync(entry.fd);
    this.#known.clear();
  }

  #evictOne(): void {
    for (const [key, entry] of this.#known) {
      if (entry === null) continue;
      closeSync(entry.fd);
      this.#known.delete(key);
      return;
    }
  }

  #open(relative: Buffer): VerifiedDirectory | null {
    const native =
      path.sep === '/'
        ? relative
        : Buffer.from(relative.toString('utf8').split('/').join(path.sep));
    const expected =
      relative.length === 0
        ? this.#rootBytes
        : Buffer.concat([this.#rootBytes, Buffer.from(path.sep), native]);
    let real: Buffer;
    try {
      real = realpathSync.native(expected, { encoding: 'buffer' });
    } catch {
      return null;
    }
    if (this.#strict && !real.equals(expected)) return null;
    const realText = real.toString('utf8');
    if (!isInsideRoot(this.#root, realText)) return null;
    if (hasGitSegment(path.relative(this.#root, realText))) return null;
    let fd: number;
    try {
      fd = openSync(real, DIRECTORY_FLAGS);
    } catch {
      return null;
    }
    // The descriptor must be the directory checked (see verifyOpened).
    const kernel = PROC_FD ? descriptorPathBytes(fd) : undefined;
    let same: boolean;
    if (PROC_FD) {
      same = kernel !== undefined && kernel.equals(real);
    } else {
      try {
        const opened = fstatSync(fd);
        const current = statSync(real);
        same = opened.ino === current.ino && opened.dev === current.dev;
      } catch {
        same = false;
      }
    }
    if (!same) {
      closeSync(fd);
      return null;
    }
    const realWithSeparator = Buffer.concat([real, Buffer.from(path.sep)]);
    const prefix = PROC_FD ? Buffer.from(`/proc/self/fd/${fd}/`) : realWithSeparator;
    return { prefix, fd, real: realWithSeparator };
  }
}

function descriptorPathBytes(fd: number): Buffer | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
  } catch {
    return undefined;
  }
}

// ---- Writes: never through a symlink -----------------------------------------------------------

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

function kindOf(stats: Stats | undefined): EntryKind {
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
  return kindOf(lstatNoFollowInsideRoot(root, relative));
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
 * naming it, and nothing is written. Returns the file's real path.
 */
export async function writeFileAtomicInsideRoot(
  root: string,
  relative: string,
  data: string | Buffer,
  options: { mode?: number } = {},
): Promise<string> {
  const { segments, shown } = writableSegments(root, relative);
  const name = segments.pop() as string;
  const directory = openWritableDirectory(root, segments, true, shown) as WritableDirectory;
  const target = `${directory.prefix}/${name}`;
  const temporary = `${directory.prefix}/.${name}.${randomBytes(6).toString('hex')}.tmp`;
  let created = false;
  try {
    const existing = kindOf(lstatSync(target, { throwIfNoEntry: false }));
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
    const kind = kindOf(lstatSync(target, { throwIfNoEntry: false }));
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

/** The kind of an lstat result (undefined: missing). */
export { kindOf as entryKind };
export type { Stats };

// ---- Listing helpers for the file tools' walks -------------------------------------------------

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

// ---- Health of the file layer ------------------------------------------------------------------

/**
 * A probe of the file layer for the host's health check: every `everyMs` it lstats the root
 * through libuv's thread pool (where every asynchronous file call of the tools waits its turn) and
 * reports how long the probe has been pending. A process whose event loop answers pings while its
 * file calls never complete (the pool exhausted by calls stuck in the kernel) shows here.
 */
export function createFileLayerProbe(
  root: string,
  everyMs = 2_000,
): { pendingMs(): number; close(): void } {
  let pendingSince: number | undefined;
  const timer = setInterval(() => {
    if (pendingSince !== undefined) return;
    pendingSince = Date.now();
    lstat(root).then(
      () => (pendingSince = undefined),
      () => (pendingSince = undefined), // an answer, even an error, means the layer runs
    );
  }, everyMs);
  timer.unref();
  return {
    pendingMs: () => (pendingSince === undefined ? 0 : Date.now() - pendingSince),
    close: () => clearInterval(timer),
  };
}
