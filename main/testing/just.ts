// The pinned `just` the tests run (scripts/install-just.mjs puts it in node_modules/.cache at
// npm install): first on this process's PATH, so the tools under test and the processes the
// tests start (grove serve, grove bridge) find it as a user's Grove finds theirs.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { JUST_DIR, JUST_VERSION } from '../../scripts/install-just.mjs';

/** Puts the pinned `just` first on PATH; throws, naming the fix, when it is not installed. */
export function putJustOnPath(): void {
  if (!existsSync(path.join(JUST_DIR, process.platform === 'win32' ? 'just.exe' : 'just'))) {
    throw new Error(
      `just ${JUST_VERSION} is not installed for the tests: run node scripts/install-just.mjs`,
    );
  }
  const entries = (process.env.PATH ?? '').split(path.delimiter);
  if (!entries.includes(JUST_DIR)) process.env.PATH = [JUST_DIR, ...entries].join(path.delimiter);
}
