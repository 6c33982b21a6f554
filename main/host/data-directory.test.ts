// The data directory is private: created 0700 (whatever the umask), its database, SQLite
// companions and secret store 0600, an existing install's looser modes fixed on start, and a
// symlinked private file refused without touching its target. Real temp dirs, real SQLite.
import { UserError } from '../platform/errors.ts';
import { chmod, lstat, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir } from '../testing/temp-repo.ts';
import { AppDatabase } from './app-database.ts';
import { homedir } from 'node:os';
import { defaultDataDirectory, secureDataDirectory } from './data-directory.ts';

const modeOf = async (file: string): Promise<number> => (await lstat(file)).mode & 0o777;

describe.skipIf(process.platform === 'win32')('the data directory', () => {
  it('is created 0700 with grove.db and its WAL companions 0600', async () => {
    const dataDir = path.join(await makeTempDir(), 'config', 'Grove');
    const db = await AppDatabase.open(dataDir);
    try {
      db.setSetting('ui-token', 'secret-token'); // the WAL now holds a token
      expect(await modeOf(dataDir)).toBe(0o700);
      for (const name of ['grove.db', 'grove.db-wal', 'grove.db-shm']) {
        expect({ name, mode: await modeOf(path.join(dataDir, name)) }).toEqual({
          name,
          mode: 0o600,
        });
      }
    } finally {
      db.close();
    }
  });

  it('is created 0700 whatever the umask (the mode is set after creation)', async () => {
    const dataDir = path.join(await makeTempDir(), 'Grove');
    const previous = process.umask(0o277); // mkdir alone would give 0500
    try {
      await secureDataDirectory(dataDir);
    } finally {
      process.umask(previous);
    }
    expect(await modeOf(dataDir)).toBe(0o700);
  });

  it('fixes an existing install: a 0755 directory, a 0644 database and secret store', async () => {
    const dataDir = await makeTempDir();
    const first = await AppDatabase.open(dataDir);
    first.setSetting('ui-token', 'secret-token');
    first.close();
    const secrets = path.join(dataDir, 'secrets.bin');
    await writeFile(secrets, 'encrypted');
    await chmod(dataDir, 0o755);
    await chmod(path.join(dataDir, 'grove.db'), 0o644);
    await chmod(secrets, 0o644);

    const reopened = await AppDatabase.open(dataDir);
    try {
      expect(await modeOf(dataDir)).toBe(0o700);
      expect(await modeOf(path.join(dataDir, 'grove.db'))).toBe(0o600);
      expect(await modeOf(secrets)).toBe(0o600);
      expect(reopened.getSetting('ui-token')).toBe('secret-token'); // the data is untouched
    } finally {
      reopened.close();
    }
  });

  it('refuses a symlinked grove.db, naming it, and leaves the target alone', async () => {
    const dataDir = await makeTempDir();
    const elsewhere = await makeTempDir();
    const target = path.join(elsewhere, 'other.db');
    await writeFile(target, 'someone else’s file');
    await chmod(target, 0o644);
    await symlink(target, path.join(dataDir, 'grove.db'));

    const opening = AppDatabase.open(dataDir);
    await expect(opening).rejects.toThrow(UserError);
    await expect(opening).rejects.toThrow(
      `refusing to use ${path.join(dataDir, 'grove.db')}: it is a symbolic link (to ${target})`,
    );
    expect(await modeOf(target)).toBe(0o644);
    expect(await readFile(target, 'utf8')).toBe('someone else’s file');
  });

  it('refuses a symlinked secret store and a grove.db that is not a regular file', async () => {
    const linked = await makeTempDir();
    const target = path.join(await makeTempDir(), 'secrets');
    await writeFile(target, 'x');
    await chmod(target, 0o644);
    await symlink(target, path.join(linked, 'secrets.bin'));
    await expect(secureDataDirectory(linked)).rejects.toThrow(
      `refusing to use ${path.join(linked, 'secrets.bin')}: it is a symbolic link`,
    );
    expect(await modeOf(target)).toBe(0o644);

    const withDirectory = await makeTempDir();
    await mkdir(path.join(withDirectory, 'grove.db'));
    await expect(AppDatabase.open(withDirectory)).rejects.toThrow(
      `refusing to use ${path.join(withDirectory, 'grove.db')}: it is not a regular file`,
    );
  });

  it('changes no mode on Windows', async () => {
    const dataDir = await makeTempDir();
    await chmod(dataDir, 0o755);
    await secureDataDirectory(dataDir, 'win32');
    expect((await stat(dataDir)).mode & 0o777).toBe(0o755);
  });
});

describe('where the data directory is', () => {
  it('is GROVE_DATA_DIR when set, else the platform per-user config directory', () => {
    expect(defaultDataDirectory({ GROVE_DATA_DIR: '/srv/grove' }, 'linux')).toBe('/srv/grove');
    expect(defaultDataDirectory({ XDG_CONFIG_HOME: '/x/config' }, 'linux')).toBe('/x/config/Grove');
    expect(defaultDataDirectory({}, 'linux')).toBe(path.join(homedir(), '.config', 'Grove'));
    expect(defaultDataDirectory({}, 'darwin')).toBe(
      path.join(homedir(), 'Library', 'Application Support', 'Grove'),
    );
    expect(defaultDataDirectory({ APPDATA: 'C:/Users/u/AppData/Roaming' }, 'win32')).toBe(
      path.join('C:/Users/u/AppData/Roaming', 'Grove'),
    );
  });
});
