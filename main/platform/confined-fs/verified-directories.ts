// Verified directories, for the worker threads' many small opens.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  realpathSync,
  statSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { OPEN_FLAGS, PROC_FD, descriptorPathBytes } from './descriptors.ts';
import { hasGitSegment, isGitName, isInsideRoot } from './resolve.ts';

export const DIRECTORY_FLAGS =
  constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0);
/** Read-only, never through a final symlink, never waiting on a FIFO. */
export const FILE_OPEN_FLAGS = OPEN_FLAGS;

interface VerifiedDirectory {
  /** Its real path, ending with a separator. */
  real: Buffer;
  /** The same as text, when those bytes are valid UTF-8 (else null: lstat goes by bytes). */
  realText: string | null;
  /**
   * Opened on the first open of a file in it (a stat needs none): the descriptor, and the prefix
   * its entries resolve through (/proc/self/fd/N/); null when the directory opened was not the
   * one checked.
   */
  pinned?: { fd: number; prefix: Buffer } | null;
}

/**
 * Opens the directories of many files once each, proved inside the root, so that every file is
 * then opened relative to its directory's descriptor (/proc/self/fd/N/name on Linux): a directory
 * swapped for a symlink after the check cannot redirect an open. A directory whose files are only
 * stat'ed is resolved and checked, not opened (an lstat goes by its real path). Synchronous, for
 * worker threads (grep, hashing) and the CLI's stat pass. At most `maxOpen` directories are kept
 * at a time.
 */
export class VerifiedDirectories {
  readonly #root: string;
  readonly #rootBytes: Buffer;
  readonly #strict: boolean;
  readonly #maxOpen: number;
  /** Directory key -> prefix for its entries, or null when it is not provably inside. */
  readonly #known = new Map<string, VerifiedDirectory | null>();
  /** lstatText's directory: the last one asked for, its bytes and its real path as text. */
  #lastText: string | undefined;
  #lastBytes = Buffer.alloc(0);
  #lastReal: string | null = null;

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
    const directory = this.#directory(relativeDirectory);
    if (directory === null) return null;
    if (directory.pinned === undefined) directory.pinned = pin(directory.real);
    return directory.pinned?.prefix ?? null;
  }

  #directory(relativeDirectory: Buffer): VerifiedDirectory | null {
    const key = relativeDirectory.toString('latin1');
    const known = this.#known.get(key);
    if (known !== undefined) return known;
    const verified = this.#resolve(relativeDirectory);
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

  /**
   * `lstat` for a directory and a name given as text (a worktree-relative POSIX directory, UTF-8,
   * as git lists it): the same answer, cheaper for many names of one directory in a row (a stat
   * pass over git's listing). The directory is looked up once per run of names, and each name is
   * joined to its real path as text (no Buffer per name; the call encodes it as UTF-8, as
   * `Buffer.from(name)` does); a real path that is not valid UTF-8 goes by bytes, as `lstat`.
   */
  lstatText(relativeDirectory: string, name: string): Stats | undefined | null {
    if (relativeDirectory !== this.#lastText) {
      this.#lastText = relativeDirectory;
      this.#lastBytes = Buffer.from(relativeDirectory);
      this.#lastReal = this.#directory(this.#lastBytes)?.realText ?? null;
    }
    if (this.#lastReal !== null) {
      return lstatSync(this.#lastReal + name, { throwIfNoEntry: false });
    }
    return this.lstat(this.#lastBytes, Buffer.from(name));
  }

  close(): void {
    for (const entry of this.#known.values()) if (entry?.pinned) closeSync(entry.pinned.fd);
    this.#known.clear();
    this.#lastText = undefined;
  }

  #evictOne(): void {
    this.#lastText = undefined; // lstatText looks its directory up again
    for (const [key, entry] of this.#known) {
      if (entry === null) continue;
      if (entry.pinned) closeSync(entry.pinned.fd);
      this.#known.delete(key);
      return;
    }
  }

  /** The directory's real path, if it is provably inside the root (and not in `.git`). */
  #resolve(relative: Buffer): VerifiedDirectory | null {
    // A directory that is no symlink, in a parent already resolved, is that parent's real path
    // and its name: one lstat instead of realpath's one per component (git lists a directory's
    // subdirectories together, so the parent is usually known).
    const slash = relative.lastIndexOf(0x2f);
    const name = relative.subarray(slash + 1).toString('utf8');
    // A name that is not one (empty, `.`, `..`, a separator in it on Windows) takes the long way:
    // realpath, then the checks.
    if (relative.length > 0 && name !== '' && name !== '.' && name !== '..' && !/\\/.test(name)) {
      if (isGitName(name)) return null;
      const parent = this.#directory(slash < 0 ? EMPTY : relative.subarray(0, slash));
      if (parent === null) return null;
      const candidate = Buffer.concat([parent.real, relative.subarray(slash + 1)]);
      const stats = lstatSync(candidate, { throwIfNoEntry: false });
      if (stats === undefined) return null;
      if (stats.isDirectory()) return verified(candidate);
      if (!stats.isSymbolicLink()) return null;
    }
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
    return verified(real);
  }
}

const EMPTY = Buffer.alloc(0);

/** A directory proved inside, from its real path (`real`, no separator at the end). */
function verified(real: Buffer): VerifiedDirectory {
  const realWithSeparator = Buffer.concat([real, Buffer.from(path.sep)]);
  const text = `${real.toString('utf8')}${path.sep}`;
  const textual = Buffer.from(text).equals(realWithSeparator) ? text : null;
  return { real: realWithSeparator, realText: textual };
}

/**
 * Opens a checked directory (`real`, ending with a separator) and proves the descriptor is that
 * directory (see verifyOpened): null when it cannot be opened or is another one by now.
 */
function pin(real: Buffer): { fd: number; prefix: Buffer } | null {
  const directory = real.length > 1 ? real.subarray(0, real.length - 1) : real;
  let fd: number;
  try {
    fd = openSync(directory, DIRECTORY_FLAGS);
  } catch {
    return null;
  }
  const kernel = PROC_FD ? descriptorPathBytes(fd) : undefined;
  let same: boolean;
  if (PROC_FD) {
    same = kernel !== undefined && kernel.equals(directory);
  } else {
    try {
      const opened = fstatSync(fd);
      const current = statSync(directory);
      same = opened.ino === current.ino && opened.dev === current.dev;
    } catch {
      same = false;
    }
  }
  if (!same) {
    closeSync(fd);
    return null;
  }
  return { fd, prefix: PROC_FD ? Buffer.from(`/proc/self/fd/${fd}/`) : real };
}
