// What every part of the layer shares: the flags every read opens with, the kernel's own name for
// an open descriptor (/proc/self/fd on Linux), the check that an opened handle is the file
// checked, and the synchronous fs calls used as promises (docs/decisions.md says why).
import {
  constants,
  existsSync,
  lstatSync,
  read,
  readlinkSync,
  realpathSync,
  statSync,
  write,
  type Stats,
} from 'node:fs';
import type * as NodeUtil from 'node:util';
import { requireBuiltin } from '../builtins.ts';
import { UserError } from '../errors.ts';
import type { SandboxPath } from './types.ts';

/** node:util required, not imported (platform/builtins.ts says why). */
const { promisify } = requireBuiltin<typeof NodeUtil>('node:util');
export const readAsync = promisify(read);
export const writeAsync = promisify(write);
/** One realpath(3) call (libuv's), as fs/promises' realpath, without the thread-pool trip. */
export const realpath = async (target: string): Promise<string> => realpathSync.native(target);
export const stat = async (target: string): Promise<Stats> => statSync(target);
export const lstatNow = async (target: string): Promise<Stats> => lstatSync(target);
export const readlink = async (target: string): Promise<string> => readlinkSync(target);

export const OPEN_FLAGS =
  constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Linux names every open descriptor in /proc/self/fd: what the handle is, asked of the kernel. */
export const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

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
export function descriptorPrefix(fd: number, realPath: string): string {
  return PROC_FD ? `/proc/self/fd/${fd}` : realPath;
}

/**
 * After opening `checked.realPath`, proves the handle is that file. On Linux the descriptor's own
 * path must be the checked real path (no second lookup of the path: nothing swapped in between
 * can pass); elsewhere the path must still resolve to itself and name the handle's inode.
 */
export function verifyOpened(checked: SandboxPath, fd: number, opened: Stats, shown: string): void {
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

export function descriptorPathBytes(fd: number): Buffer | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
  } catch {
    return undefined;
  }
}
