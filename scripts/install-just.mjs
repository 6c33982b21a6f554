// postinstall: puts the pinned `just` (the command runner behind list_just_tasks/run_just_task) in
// node_modules/.cache/grove/just-<version>/just, for the tests to run the real thing. It comes
// from npm, as the `rust-just-<os>-<cpu>` package of that version (the binary the `rust-just`
// wrapper package would pick): `npm pack` fetches and verifies it, and only the binary is kept.
// Not a devDependency: the registry a machine sees may not hold the other platforms' packages,
// and npm ci then refuses a lock file that lists them as missing (docs/decisions.md). A user's
// Grove never uses this copy: it runs the `just` on the user's PATH.
//
// Never fails the install: without network or on a platform the package does not cover, it says
// so, and the tests that need `just` fail with a message naming this script.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const JUST_VERSION = '1.57.0';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the tests find `just` (main/testing/just.ts puts it first on PATH). */
export const JUST_DIR = path.join(ROOT, 'node_modules', '.cache', 'grove', `just-${JUST_VERSION}`);

/** The npm package holding `just` for this machine, as rust-just names them. */
function platformPackage() {
  const os = { linux: 'linux', darwin: 'darwin', win32: 'windows' }[process.platform];
  const cpu = { x64: 'x64', arm64: 'arm64', arm: 'arm', loong64: 'loong64', riscv64: 'riscv64' }[
    process.arch
  ];
  return os && cpu ? `rust-just-${os}-${cpu}@${JUST_VERSION}` : undefined;
}

export function installJust() {
  const binary = path.join(JUST_DIR, process.platform === 'win32' ? 'just.exe' : 'just');
  if (existsSync(binary)) return binary;
  const spec = platformPackage();
  if (!spec) throw new Error(`no just package for ${process.platform}-${process.arch}`);
  const scratch = mkdtempSync(path.join(tmpdir(), 'grove-just-'));
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const tarball = execFileSync(npm, ['pack', spec, '--silent', '--pack-destination', scratch], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
    execFileSync('tar', ['-xzf', path.join(scratch, tarball.split('\n').pop()), '-C', scratch]);
    const unpacked = path.join(scratch, 'package', 'bin', path.basename(binary));
    mkdirSync(JUST_DIR, { recursive: true });
    copyFileSync(unpacked, `${binary}.partial`);
    chmodSync(`${binary}.partial`, 0o755);
    // Whole or not at all: a cut install leaves no half binary where the tests look.
    renameSync(`${binary}.partial`, binary);
    return binary;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const binary = installJust();
    const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
    console.log(`grove: ${version} for the tests (${path.relative(ROOT, binary)})`);
  } catch (error) {
    console.warn(
      `grove: could not fetch just ${JUST_VERSION} for the tests (${error.message}); ` +
        'run `node scripts/install-just.mjs` when online',
    );
  }
}
