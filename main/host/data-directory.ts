// The data directory's permissions: it holds the app database (every worktree's token, the UI
// token) and the Electron secret store (the chat's API key), so it is the user's alone. It is
// created 0700 and its private files are 0600; an existing install with looser modes is fixed on
// every start. Modes are set with chmod after creation, so they do not depend on the umask. A
// private file that is a symbolic link (or not a regular file) is refused, never followed: its
// mode is changed on a descriptor opened with O_NOFOLLOW and checked to be the file just looked at.
// Windows has no POSIX modes: there this only creates the directory.
import { UserError } from '../platform/errors.ts';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readlink, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * Where Grove keeps its app database, settings, secrets and log, for every shell (the Electron
 * app sets its userData path to it, `grove serve` defaults to it): GROVE_DATA_DIR when set, else
 * the per-user config directory of the platform.
 */
export function defaultDataDirectory(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  if (env.GROVE_DATA_DIR) return env.GROVE_DATA_DIR;
  if (platform === 'darwin') return path.join(homedir(), 'Library', 'Application Support', 'Grove');
  if (platform === 'win32') {
    return path.join(env.APPDATA ?? path.join(homedir(), 'AppData', 'Roaming'), 'Grove');
  }
  return path.join(env.XDG_CONFIG_HOME ?? path.join(homedir(), '.config'), 'Grove');
}

/** Files in the data directory that hold tokens or keys (SQLite's companions included). */
export const PRIVATE_DATA_FILES = [
  'grove.db',
  'grove.db-wal',
  'grove.db-shm',
  'grove.db-journal',
  'secrets.bin',
  // The running host's pid and UI URL with its token (host-lock.ts). Not its lock file, host.lock:
  // it holds nothing, and opening it here would release the lock (see host-lock.ts).
  'host.json',
] as const;

export const DATA_DIRECTORY_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** The data directory or one of its private files cannot be made private. */
function refusal(message: string): UserError {
  return new UserError(message, { code: 'refused' });
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Creates `dataDir` (0700) or tightens an existing one to 0700, and tightens every existing private
 * file in it to 0600. Throws a UserError naming the file when one is a symlink, is not a
 * regular file, or belongs to another user.
 */
export async function secureDataDirectory(
  dataDir: string,
  platform: NodeJS.Platform = process.platform,
): Promise<void> {
  const created = await mkdir(dataDir, { recursive: true, mode: DATA_DIRECTORY_MODE });
  if (platform === 'win32') return;
  // The directory itself may be a symlink the user made (dotfiles): its target is what is secured.
  const info = await stat(dataDir);
  if (!info.isDirectory()) {
    throw refusal(`the data directory ${dataDir} is not a directory`);
  }
  checkOwner(dataDir, info.uid);
  if (created !== undefined || (info.mode & 0o077) !== 0) {
    const handle = await open(dataDir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const opened = await handle.stat();
      if (opened.ino !== info.ino || opened.dev !== info.dev) {
        throw refusal(`the data directory ${dataDir} changed while being secured`);
      }
      await handle.chmod(DATA_DIRECTORY_MODE);
    } finally {
      await handle.close();
    }
  }
  await securePrivateFiles(dataDir, platform);
}

/**
 * Tightens every existing private file of `dataDir` to 0600 (refusing symlinks and non-regular
 * files). Called again after SQLite created the database and its WAL companions.
 */
export async function securePrivateFiles(
  dataDir: string,
  platform: NodeJS.Platform = process.platform,
): Promise<void> {
  if (platform === 'win32') return;
  for (const name of PRIVATE_DATA_FILES) await securePrivateFile(path.join(dataDir, name));
}

async function securePrivateFile(file: string): Promise<void> {
  let link;
  try {
    link = await lstat(file);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (link.isSymbolicLink()) {
    const target = await readlink(file).catch(() => '?');
    throw refusal(
      `refusing to use ${file}: it is a symbolic link (to ${target}). Grove keeps tokens and keys ` +
        'in it and does not follow links there; replace it with the real file.',
    );
  }
  if (!link.isFile()) {
    throw refusal(`refusing to use ${file}: it is not a regular file`);
  }
  checkOwner(file, link.uid);
  if ((link.mode & 0o077) === 0) return;
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (errorCode(error) === 'ELOOP' || errorCode(error) === 'EMLINK') {
      throw refusal(`refusing to use ${file}: it is a symbolic link`);
    }
    throw error;
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== link.ino || opened.dev !== link.dev) {
      throw refusal(`refusing to use ${file}: it changed while being secured`);
    }
    await handle.chmod(PRIVATE_FILE_MODE);
  } finally {
    await handle.close();
  }
}

/** Another user's directory or file is not private to us, whatever its mode (root may use any). */
function checkOwner(file: string, uid: number): void {
  const own = process.getuid?.();
  if (own === undefined || own === 0 || uid === own) return;
  throw refusal(
    `refusing to use ${file}: it belongs to another user (uid ${uid}), so tokens and keys kept ` +
      'there would not be private',
  );
}
