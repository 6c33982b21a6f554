// Launches the system Chromium (Debian's `chromium`, or $GROVE_CHROMIUM) through playwright-core:
// headless, quiet (no network chatter, no updates), in a fresh throwaway profile.
import { constants } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

export interface LaunchedChromium {
  context: BrowserContext;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
}

/** $GROVE_CHROMIUM, else `chromium` on PATH; throws with a hint when neither exists. */
export async function findChromium(): Promise<string> {
  const fromEnv = process.env['GROVE_CHROMIUM'];
  if (fromEnv) {
    if (await isExecutable(fromEnv)) return fromEnv;
    throw new Error(`GROVE_CHROMIUM=${fromEnv} is not an executable file.`);
  }
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'chromium');
    if (await isExecutable(candidate)) return candidate;
  }
  throw new Error(
    'Chromium not found: install it (`apt-get install -y chromium`) or set GROVE_CHROMIUM.',
  );
}

export async function launchChromium(
  options: { colorScheme?: 'light' | 'dark' } = {},
): Promise<LaunchedChromium> {
  const executablePath = await findChromium();
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'grove-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      colorScheme: options.colorScheme ?? 'light',
      viewport: { width: 1100, height: 800 },
      timeout: 30_000,
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    context,
    async close() {
      try {
        await context.close();
      } finally {
        await rm(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Records the page's uncaught errors and console errors into `errors`, so a test can assert none. */
export function collectPageErrors(page: Page, errors: string[]): void {
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
}
