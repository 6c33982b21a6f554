// Finds the Electron binary without require('electron') (which would try to download it): reads
// node_modules/electron/path.txt as the electron package does, or ELECTRON_OVERRIDE_DIST_PATH.
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const electronPackage = fileURLToPath(new URL('../../node_modules/electron/', import.meta.url));

/** The executable's path, or a one-line reason why there is none. */
export async function findElectronBinary(): Promise<{ path: string } | { reason: string }> {
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  let executable: string;
  if (override) {
    executable = path.join(
      override,
      process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : 'electron',
    );
  } else {
    const relative = await readFile(path.join(electronPackage, 'path.txt'), 'utf8').catch(
      () => null,
    );
    if (relative === null) {
      return {
        reason:
          'no Electron binary on this machine (node_modules/electron/path.txt missing; run `npx install-electron`)',
      };
    }
    executable = path.join(electronPackage, 'dist', relative.trim());
  }
  try {
    await access(executable);
    return { path: executable };
  } catch {
    return { reason: `no Electron binary at ${executable}` };
  }
}
