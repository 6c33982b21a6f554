// Secrets (LLM API keys) encrypted with Electron's safeStorage (the OS keychain / libsecret / DPAPI)
// in a file in the user data directory; written atomically, 0600 whatever the umask (and fixed on
// start with the rest of the data directory: main/host/data-directory.ts). Never sent to the
// renderer.
import { safeStorage } from 'electron';
import { chmod, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export class SecretStore {
  private readonly file: string;

  constructor(userDataDir: string) {
    this.file = path.join(userDataDir, 'secrets.bin');
  }

  private async readAll(): Promise<Record<string, string>> {
    try {
      const encrypted = await readFile(this.file);
      return JSON.parse(safeStorage.decryptString(encrypted)) as Record<string, string>;
    } catch {
      return {};
    }
  }

  async get(name: string): Promise<string | undefined> {
    return (await this.readAll())[name];
  }

  async set(name: string, value: string | undefined): Promise<void> {
    if (!safeStorage.isEncryptionAvailable()) {
      throw new Error('the system keychain is not available: cannot store secrets safely');
    }
    const all = await this.readAll();
    if (value === undefined) delete all[name];
    else all[name] = value;
    const temporary = `${this.file}.${process.pid}.tmp`;
    // A stale temporary file (a crash) would keep its old mode: write a fresh one ('wx' refuses an
    // existing file or symlink), then set 0600 explicitly (the create mode is cut by the umask).
    await rm(temporary, { force: true });
    await writeFile(temporary, safeStorage.encryptString(JSON.stringify(all)), {
      mode: 0o600,
      flag: 'wx',
    });
    if (process.platform !== 'win32') await chmod(temporary, 0o600);
    await rename(temporary, this.file);
  }
}
