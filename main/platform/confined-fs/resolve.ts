// Resolving a client's path inside the worktree root: lexical checks, real paths compared by
// segments, `.git` refused, and refusals worded for a model to act on.
import { type Stats } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.ts';
import { lstatNow, readlink, realpath, stat } from './descriptors.ts';
import type { SandboxPath } from './types.ts';

/** Longest path (in UTF-16 code units) a client may pass. */
export const MAX_PATH_LENGTH = 4096;

/** Most symlinks followed by hand when explaining a dangling link. */
const MAX_LINK_HOPS = 40;

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

/** How much of a client's path (or other argument) an error message echoes. */
export const SHOWN_ARGUMENT_CHARS = 200;

/**
 * A client's path (or any argument an error echoes) shortened to SHOWN_ARGUMENT_CHARS and "…",
 * unquoted: for messages that keep NotarAI's unquoted form. A client chooses the argument, and an
 * error is kept (the activity log) and shown: it never carries more of it than this.
 */
export function shortArgument(requested: string): string {
  return requested.length > SHOWN_ARGUMENT_CHARS
    ? `${requested.slice(0, SHOWN_ARGUMENT_CHARS)}…`
    : requested;
}

/** Quotes a client path for an error message: JSON-escaped (NUL shows as \u0000), shortened. */
export function displayPath(requested: string): string {
  return JSON.stringify(shortArgument(requested));
}

/** A `.git` name, also in the spellings that alias it on case-insensitive or Windows disks. */
export function isGitName(segment: string): boolean {
  return /^\.git[. ]*$/i.test(segment);
}

export function hasGitSegment(relative: string): boolean {
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
export function checkLexically(root: string, requested: unknown): LexicalTarget {
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

export function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Turns a file-system failure on a checked path into a UserError a model can act on. */
export function fsRefusal(error: unknown, requested: string, shown: string): UserError {
  switch (errnoCode(error)) {
    case 'ENOENT':
    case 'ENOTDIR': {
      let hint = '';
      if (/^~($|[\\/])/.test(requested))
        hint = ' (paths are relative to the worktree root; ~ is not expanded)';
      else if (/%[0-9a-f]{2}/i.test(requested)) hint = ' (percent-encoding is not decoded)';
      return new UserError(`no such file or directory in the worktree: ${shown}${hint}`, {
        code: 'not-found',
      });
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

/**
 * The first of `names` that is a regular file inside the root (a symlink counts only if it stays
 * inside), or undefined: a project file such as a justfile or a compose file, looked for in order.
 */
export async function firstFileInRoot(
  root: string,
  names: readonly string[],
): Promise<StattedPath | undefined> {
  for (const name of names) {
    const found = await statInsideRoot(root, name).catch(() => undefined);
    if (found?.stats.isFile()) return found;
  }
  return undefined;
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
