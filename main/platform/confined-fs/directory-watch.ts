// What the live index's sync tap (main/reconcile/floor/sync-tap.ts) needs of a worktree's directories:
// names only, never a file's content. A directory is watched (one non-recursive fs.watch, inotify
// on Linux) only after an lstat found a directory there (not a symlink: lstat does not follow); a
// swap between the two can at worst point a watch at another directory, whose events are names
// the live index checks again through this layer (entryKindInsideRoot) before using any. Listings
// report subdirectories by readdir's own types (never following), names as bytes: a name that is
// not valid UTF-8 is reported as such, since fs.watch cannot be given it.
import { lstatSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';

/** The inode of the directory at `absolute`, or undefined if there is none (or a symlink). */
export function directoryInode(absolute: string): number | undefined {
  try {
    const stats = lstatSync(absolute);
    return stats.isDirectory() ? stats.ino : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Watches the names in the directory at `absolute` (not below it). Throws as fs.watch does
 * (ENOENT, ENOSPC: the inotify watch limit, EMFILE...). The watch keeps no process alive.
 */
export function watchDirectoryNames(
  absolute: string,
  listener: (type: string, name: string | null) => void,
): FSWatcher {
  return watch(absolute, { persistent: false }, (type, name) => listener(type, name));
}

/**
 * The subdirectories of the directory at `absolute`, as absolute paths; undefined when it is gone
 * (or no longer a directory); `unnamed` true when one has a name that is not valid UTF-8. Other
 * errors (EACCES...) are thrown.
 */
export async function listSubdirectories(
  absolute: string,
): Promise<{ directories: string[]; unnamed: boolean } | undefined> {
  let entries;
  try {
    entries = await readdir(absolute, { withFileTypes: true, encoding: 'buffer' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
  const directories: string[] = [];
  let unnamed = false;
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const name = entry.name.toString('utf8');
    if (!Buffer.from(name, 'utf8').equals(entry.name)) unnamed = true;
    else directories.push(path.join(absolute, name));
  }
  return { directories, unnamed };
}

/** The kernel's inotify queue length (/proc/sys/fs/inotify/max_queued_events), if readable. */
export function inotifyMaxQueuedEvents(): number | undefined {
  return inotifySetting('max_queued_events');
}

/** The inotify watches one user may hold, all processes together (max_user_watches), if readable. */
export function inotifyMaxUserWatches(): number | undefined {
  return inotifySetting('max_user_watches');
}

function inotifySetting(name: string): number | undefined {
  try {
    const value = Number(readFileSync(`/proc/sys/fs/inotify/${name}`, 'utf8').trim());
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}
