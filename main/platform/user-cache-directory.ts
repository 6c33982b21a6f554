// Where Grove keeps what it can always compute again (the CLI's remembered spec validations): the
// platform's per-user cache directory. Nothing there is needed: a missing, unreadable or
// read-only cache only makes a command do the work itself.
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** `$XDG_CACHE_HOME/grove` (default `~/.cache/grove`), `~/Library/Caches/Grove`, `%LOCALAPPDATA%\Grove\Cache`. */
export function userCacheDirectory(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  if (platform === 'darwin') return path.join(homedir(), 'Library', 'Caches', 'Grove');
  if (platform === 'win32') {
    return path.join(
      env.LOCALAPPDATA ?? path.join(homedir(), 'AppData', 'Local'),
      'Grove',
      'Cache',
    );
  }
  return path.join(env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'grove');
}

/**
 * A cache file's text (`relative` to the cache directory), or undefined when it is missing, not a
 * regular file, bigger than `maxBytes` or unreadable.
 */
export function readCacheFile(
  relative: string,
  maxBytes: number,
  directory = userCacheDirectory(),
): string | undefined {
  try {
    const fd = openSync(path.join(directory, relative), constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile() || stats.size > maxBytes) return undefined;
      return readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/**
 * Writes a cache file whole: a new file renamed over the old one, so a reader sees one or the
 * other. Returns false (and leaves the old file) when it cannot.
 */
export function writeCacheFile(
  relative: string,
  text: string,
  directory = userCacheDirectory(),
): boolean {
  const file = path.join(directory, relative);
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, file);
    return true;
  } catch {
    rmSync(temporary, { force: true });
    return false;
  }
}
