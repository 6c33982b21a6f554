// Finds a repository's worktrees: given any path inside a worktree (main or linked), resolves the
// repository and lists every worktree with `git worktree list --porcelain -z`, main one first.
// Paths are resolved with realpath and refused with a clear UserError when they lead into
// /proc, /sys or /dev or are not a git work tree; a listed worktree that fails the same checks is
// reported with a `refusal` and never served.
import { UserError } from '../platform/errors.ts';
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { gitStdout } from '../platform/git/run-git.ts';
import { parseWorktreeList, type ListedWorktree } from '../platform/git/worktree-list.ts';

export type { ListedWorktree };

export interface DiscoveredWorktree extends ListedWorktree {
  /**
   * Why Grove will not serve this worktree (its path leads into /proc, /sys or /dev, or it is not
   * a work tree of this repository), or null. The host shows it as the worktree's error.
   */
  refusal: string | null;
}

export interface DiscoveredRepo {
  /** The main worktree's path: the repository's identity in Grove. */
  path: string;
  worktrees: DiscoveredWorktree[];
}

/**
 * `git <args>` in cwd, through the one git runner. No ceiling: the user's path may be anywhere
 * inside a worktree, so git looks for the repository above it.
 */
function git(cwd: string, args: string[]): Promise<string> {
  return gitStdout(args, { cwd, ceiling: undefined });
}

/** Directories of the kernel and devices: never a repository, never served. */
export const SYSTEM_DIRECTORIES = ['/proc', '/sys', '/dev'] as const;

/** The system directory `absolute` is (or is under), by path segments; undefined if none. */
function systemDirectoryOf(absolute: string): string | undefined {
  if (process.platform === 'win32') return undefined;
  return SYSTEM_DIRECTORIES.find((dir) => absolute === dir || absolute.startsWith(`${dir}/`));
}

/** How a path reaches a system directory: as written, through a symlink, or once resolved. */
type SystemDirectoryHit =
  | { dir: string; how: 'written' }
  | { dir: string; how: 'link'; link: string; target: string }
  | { dir: string; how: 'resolved'; real: string };

const MAX_SYMLINK_HOPS = 40;

/**
 * The system directory `absolute` leads into, as written or through a symlink anywhere on the way,
 * found by resolving it one component at a time (lstat, readlink). realpath alone is not enough:
 * `<dir>/link/cwd` with `link -> /proc/self` (or a link to `/proc/self/cwd`) resolves through the
 * kernel's magic link to an ordinary directory.
 */
async function systemDirectoryOnPath(absolute: string): Promise<SystemDirectoryHit | undefined> {
  if (process.platform === 'win32') return undefined;
  const written = systemDirectoryOf(absolute);
  if (written) return { dir: written, how: 'written' };
  const pending = absolute.split('/').filter((part) => part.length > 0);
  let current = '/';
  let hops = 0;
  for (let part = pending.shift(); part !== undefined; part = pending.shift()) {
    if (part === '.') continue;
    if (part === '..') {
      current = path.posix.dirname(current);
      continue;
    }
    const next = path.posix.join(current, part);
    const info = await lstat(next).catch(() => undefined);
    if (!info) return undefined; // the rest does not exist: nothing to resolve
    if (!info.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) return undefined; // a loop: realpath fails later
    const target = await readlink(next).catch(() => undefined);
    if (target === undefined) return undefined;
    const base = path.posix.isAbsolute(target) ? '/' : current;
    const dir = systemDirectoryOf(path.posix.resolve(base, target));
    if (dir) return { dir, how: 'link', link: next, target };
    pending.unshift(...target.split('/').filter((piece) => piece.length > 0));
    current = base;
  }
  return undefined;
}

function systemDirectoryRefusal(what: string, absolute: string, hit: SystemDirectoryHit): string {
  const way =
    hit.how === 'link'
      ? ` through the symbolic link ${hit.link} -> ${hit.target}`
      : hit.how === 'resolved'
        ? ` (it resolves to ${hit.real})`
        : '';
  return (
    `${what} ${absolute} is inside ${hit.dir}${way}, a system directory, not a git work tree: ` +
    'Grove will not serve it'
  );
}

/** A real path (after realpath) inside a system directory: the check above raced a change. */
function resolvedIntoSystemDirectory(real: string): SystemDirectoryHit | undefined {
  const dir = systemDirectoryOf(real);
  return dir ? { dir, how: 'resolved', real } : undefined;
}

/** What git says about the directory a path is in; undefined outside any repository. */
async function gitLocation(
  directory: string,
): Promise<{ insideWorkTree: boolean; bare: boolean; commonDir: string } | undefined> {
  try {
    const [insideWorkTree, bare, commonDir] = (
      await git(directory, [
        'rev-parse',
        '--path-format=absolute',
        '--is-inside-work-tree',
        '--is-bare-repository',
        '--git-common-dir',
      ])
    )
      .split('\n')
      .map((line) => line.trim());
    if (commonDir === undefined || commonDir === '') return undefined;
    return {
      insideWorkTree: insideWorkTree === 'true',
      bare: bare === 'true',
      commonDir: await realpath(commonDir).catch(() => commonDir),
    };
  } catch {
    return undefined;
  }
}

/** Reads a small regular file without following a symlink or blocking on a FIFO. */
async function readSmallFile(file: string, limit: number): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > limit) return undefined;
    const buffer = Buffer.alloc(info.size);
    const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Whether the real directory `root` is a work tree of the repository whose common git directory
 * is `commonDir`. Cheap for the usual layouts (a main worktree's `.git` directory is `commonDir`; a
 * linked one's `.git` file points into `commonDir/worktrees/`); anything else asks git.
 */
async function isWorkTreeOf(root: string, commonDir: string): Promise<boolean> {
  const dotGit = path.join(root, '.git');
  const info = await lstat(dotGit).catch(() => undefined);
  if (info?.isDirectory()) {
    if ((await realpath(dotGit).catch(() => undefined)) === commonDir) return true;
  } else if (info?.isFile()) {
    const gitdir = /^gitdir:[ \t]*(.+?)[ \t\r]*$/m.exec((await readSmallFile(dotGit, 4096)) ?? '');
    if (gitdir) {
      const target = await realpath(path.resolve(root, gitdir[1]!)).catch(() => undefined);
      if (
        target === commonDir ||
        (target && path.dirname(target) === path.join(commonDir, 'worktrees'))
      )
        return true;
    }
  }
  // Unusual layouts (core.worktree, a separate git dir...): git decides.
  try {
    const [top, common] = (
      await git(root, [
        'rev-parse',
        '--path-format=absolute',
        '--show-toplevel',
        '--git-common-dir',
      ])
    )
      .split('\n')
      .map((line) => line.trim());
    if (!top || !common) return false;
    return (
      (await realpath(top).catch(() => top)) === root &&
      (await realpath(common).catch(() => common)) === commonDir
    );
  } catch {
    return false;
  }
}

/**
 * Checks a worktree git lists: its real path, and why Grove will not serve it (inside /proc, /sys
 * or /dev; not a work tree of this repository), or null.
 */
async function checkListedWorktree(
  worktree: ListedWorktree,
  commonDir: string,
): Promise<DiscoveredWorktree> {
  const system = await systemDirectoryOnPath(worktree.path);
  if (system) {
    return {
      ...worktree,
      refusal: systemDirectoryRefusal('the worktree path', worktree.path, system),
    };
  }
  const real = await realpath(worktree.path).catch(() => undefined);
  if (real === undefined) return { ...worktree, missing: true, refusal: null };
  const resolved = resolvedIntoSystemDirectory(real);
  if (resolved) {
    return {
      ...worktree,
      refusal: systemDirectoryRefusal('the worktree path', worktree.path, resolved),
    };
  }
  if (worktree.missing) return { ...worktree, path: real, refusal: null };
  const ours = await isWorkTreeOf(real, commonDir);
  return {
    ...worktree,
    path: real,
    refusal: ours
      ? null
      : `the worktree path ${worktree.path} is not a git work tree of this repository: ` +
        'Grove will not serve it',
  };
}

/**
 * Resolves `inputPath` (any directory inside a worktree) to its repository and worktrees. The path
 * is resolved with realpath first; one inside /proc, /sys or /dev (as written or through a symlink)
 * or not inside a git work tree (a plain directory, a `.git` directory, a bare repository) is
 * refused with a UserError saying which.
 */
export async function discoverRepo(inputPath: string): Promise<DiscoveredRepo> {
  const absolute = path.resolve(inputPath);
  const system = await systemDirectoryOnPath(absolute);
  if (system)
    throw new UserError(systemDirectoryRefusal('the path', absolute, system), { code: 'refused' });
  const real = await realpath(absolute).catch(() => undefined);
  const info = real === undefined ? undefined : await stat(real).catch(() => undefined);
  if (real === undefined || !info)
    throw new UserError(`path does not exist: ${absolute}`, { code: 'not-found' });
  const resolved = resolvedIntoSystemDirectory(real);
  if (resolved)
    throw new UserError(systemDirectoryRefusal('the path', absolute, resolved), {
      code: 'refused',
    });
  const directory = info.isDirectory() ? real : path.dirname(real);
  const location = await gitLocation(directory);
  if (!location) throw new UserError(`not a git repository: ${absolute}`);
  if (location.bare) {
    throw new UserError(
      `${absolute} is a bare git repository, which has no work tree: open one of its worktrees`,
    );
  }
  if (!location.insideWorkTree) {
    throw new UserError(
      `${absolute} is inside a repository's git directory, not its work tree: open the work tree`,
    );
  }
  let output: string;
  try {
    output = await git(directory, ['worktree', 'list', '--porcelain', '-z']);
  } catch {
    throw new UserError(`not a git repository: ${absolute}`);
  }
  const checked = await Promise.all(
    parseWorktreeList(output).map((worktree) => checkListedWorktree(worktree, location.commonDir)),
  );
  // Two entries resolving to one directory would share a row and a port: the first one stands.
  const seen = new Set<string>();
  const worktrees = checked.filter((worktree) => {
    if (seen.has(worktree.path)) return false;
    seen.add(worktree.path);
    return true;
  });
  const main = worktrees.find((worktree) => worktree.isMain);
  if (!main) throw new UserError(`repository has no working tree (bare?): ${absolute}`);
  // The main worktree is the repository's identity: if it cannot be served, neither is the repo.
  if (main.refusal) throw new UserError(`cannot open ${absolute}: ${main.refusal}`);
  return { path: main.path, worktrees };
}
