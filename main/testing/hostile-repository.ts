// Fixtures for the hostile-repository tests (hostile-repository.test.ts, hostile-races.test.ts,
// confined-fs.test.ts): a secret marker beside the worktree, the hostile shapes a repository (or a
// process on the same machine) can put where Grove reads or writes, a snapshot of everything outside
// the worktree, a child process that swaps paths for symlinks while Grove reads them, and a real
// worktree process driven as the host drives it. Never used by production code.
import { execFile, fork, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { lstat, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { waitUntil } from './mcp-clients.ts';
import { git, makeTempDir, makeTempRepo, writeFiles } from './temp-repo.ts';
import { WorktreeToHostSchema } from '../../shared/worktree-to-host.ts';
import type { WorktreeToHost } from '../../shared/worktree-protocol.ts';

const execFileAsync = promisify(execFile);

/** The fixture's app spec: governs src/** and every spec file. */
export const APP_SPEC = `schema_version: '0.8'
intent: The app.
tier: registered
artifacts:
  code:
    - path: src/**
  specs:
    - path: .notarai/**/*.spec.yaml
`;

/** A marker that exists only in files outside the worktree: it must never reach a client. */
/** A spec governing `src/*.rs`: NotarAI 0.7's hostile tests start from it (rustAppRepo). */
export const RUST_APP_SPEC = `schema_version: '0.8'
intent: 'App'
tier: registered
artifacts:
  code:
    - path: 'src/*.rs'
`;

/**
 * A repository with RUST_APP_SPEC at `.notarai/app.spec.yaml`, one governed file (`src/main.rs`)
 * and no README; `files` written, not committed. Its removal is pushed to `cleanups`.
 */
export async function rustAppRepo(
  cleanups: (() => unknown)[],
  files: Record<string, string> = {},
): Promise<string> {
  const made = await makeTempRepo({ 'src/main.rs': 'x', '.notarai/app.spec.yaml': RUST_APP_SPEC });
  cleanups.push(() => made.cleanup());
  await git(made.root, 'rm', '-q', 'README.md');
  await git(made.root, 'commit', '-q', '-m', 'no readme');
  await writeFiles(made.root, files);
  return made.root;
}

/** A file `name` with `content` in a new directory outside every repository (removed after). */
export async function outsideFile(
  cleanups: (() => unknown)[],
  name: string,
  content: string,
): Promise<string> {
  const outside = await makeTempDir();
  cleanups.push(() => rm(outside, { recursive: true, force: true }));
  await writeFiles(outside, { [name]: content });
  return path.join(outside, name);
}

export const SECRET = `GROVE-HOSTILE-SECRET-${randomBytes(8).toString('hex')}`;

/** A valid spec holding the secret: if it were ever read, its intent would show up. */
export const SECRET_SPEC = `schema_version: '0.8'
intent: ${SECRET}
artifacts:
  code:
    - path: '**'
behaviors:
  - name: ${SECRET}
    given: ${SECRET}
    then: ${SECRET}
subsystems:
  - $ref: ./app.spec.yaml
`;

/** True if `value` (any result, error, message) carries the secret, as text or base64. */
export function leaksSecret(value: unknown): boolean {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  if (text.includes(SECRET)) return true;
  // A resource served as a blob would carry it base64-encoded, at one of three alignments.
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.from('x'.repeat(shift) + SECRET).toString('base64');
    const stable = encoded.slice(4 * Math.ceil(shift / 3), -4);
    if (stable.length > 8 && text.includes(stable)) return true;
  }
  return false;
}

/** The text of an unknown error, for assertions. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function mkfifo(target: string): Promise<void> {
  await execFileAsync('mkfifo', [target]);
}

/** A sparse file of `size` bytes (all zeros, no blocks on disk), as `truncate -s`. */
export async function makeSparse(target: string, size: string): Promise<void> {
  await execFileAsync('truncate', ['-s', size, target]);
}

/** Whether this process may create device nodes (root in a container). */
export const CAN_MKNOD = process.getuid?.() === 0;

/** A character device equal to /dev/zero at `target` (root only). */
export async function mknodZero(target: string): Promise<void> {
  await execFileAsync('mknod', [target, 'c', '1', '5']);
}

/**
 * Everything under `dir` (never following symlinks): path -> kind, size, mode, inode, mtime and
 * a hash of the content for regular files. Equal snapshots: nothing was created, modified or
 * deleted there.
 */
export async function snapshotTree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (current: string): Promise<void> => {
    const info = await lstat(current);
    const relative = path.relative(dir, current) || '.';
    const meta = `mode=${info.mode} ino=${info.ino} mtime=${info.mtimeMs} size=${info.size}`;
    if (info.isSymbolicLink()) {
      out.set(relative, `link -> ${await readlink(current)} ${meta}`);
    } else if (info.isDirectory()) {
      out.set(relative, `dir ${meta}`);
      for (const name of (await readdir(current)).sort()) await walk(path.join(current, name));
    } else if (info.isFile() && info.size < 16 * 1024 * 1024 && info.blocks > 0) {
      const digest = createHash('sha256')
        .update(await readFile(current))
        .digest('hex');
      out.set(relative, `file sha256=${digest} ${meta}`);
    } else {
      out.set(relative, `other ${meta}`);
    }
  };
  await walk(dir);
  return out;
}

/** The differences between two snapshots, one line each (empty: none). */
export function snapshotChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [name, value] of before) {
    const now = after.get(name);
    if (now === undefined) changes.push(`deleted ${name}`);
    else if (now !== value) changes.push(`modified ${name}: ${value} -> ${now}`);
  }
  for (const name of after.keys()) if (!before.has(name)) changes.push(`created ${name}`);
  return changes;
}

// ---- A process that swaps paths while Grove reads them -------------------------------------

/**
 * One path to swap. `file`: `target` alternates between a hard link of `inside` (a regular file
 * in the worktree) and a symlink to `outside`, each swap one rename over the target (atomic).
 * `dir`: `target` alternates between the real directory (kept aside at `inside`) and a symlink to
 * the directory `outside`, in two renames each way (a directory cannot be renamed over a symlink):
 * between them the path is briefly missing. If Grove recreated the directory meanwhile (a writer
 * creates missing directories), that stray directory is removed and counted.
 */
export interface SwapSpec {
  mode: 'file' | 'dir';
  target: string;
  inside: string;
  outside: string;
}

const SWAPPER = String.raw`
const fs = require('node:fs');
const [specsJson, durationText, stopFile] = process.argv.slice(1);
const specs = JSON.parse(specsJson);
const deadline = Date.now() + Number(durationText);
let swaps = 0, strays = 0, errors = 0, iteration = 0;
const asLink = (s) => s.target + '.swap-link';
const asFile = (s) => s.target + '.swap-file';
const removeStray = (target) => {
  try {
    const info = fs.lstatSync(target);
    if (info.isDirectory()) { fs.rmSync(target, { recursive: true, force: true }); strays++; }
    else if (info.isSymbolicLink() || info.isFile()) fs.unlinkSync(target);
  } catch {}
};
const toLink = (s) => {
  if (s.mode === 'file') {
    fs.rmSync(asLink(s), { force: true });
    fs.symlinkSync(s.outside, asLink(s));
    fs.renameSync(asLink(s), s.target);
  } else {
    // real directory -> aside; symlink -> target
    try { fs.renameSync(s.target, s.inside); } catch (e) { if (e.code !== 'ENOENT') throw e; }
    fs.rmSync(asLink(s), { force: true });
    fs.symlinkSync(s.outside, asLink(s));
    try { fs.renameSync(asLink(s), s.target); }
    catch { removeStray(s.target); fs.renameSync(asLink(s), s.target); }
  }
  swaps++;
};
const toInside = (s) => {
  if (s.mode === 'file') {
    fs.rmSync(asFile(s), { force: true });
    fs.linkSync(s.inside, asFile(s));
    fs.renameSync(asFile(s), s.target);
  } else {
    try { fs.unlinkSync(s.target); } catch (e) { if (e.code === 'EISDIR' || e.code === 'EPERM') removeStray(s.target); else if (e.code !== 'ENOENT') throw e; }
    try { fs.renameSync(s.inside, s.target); }
    catch { removeStray(s.target); fs.renameSync(s.inside, s.target); }
  }
  swaps++;
};
while (Date.now() < deadline && !fs.existsSync(stopFile)) {
  iteration++;
  for (const s of specs) {
    try { toLink(s); } catch { errors++; }
  }
  for (const s of specs) {
    try { toInside(s); } catch { errors++; }
  }
}
// Leave every target as its inside version.
for (const s of specs) {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const info = fs.lstatSync(s.target, { throwIfNoEntry: false });
      if (s.mode === 'file' || !info || !info.isDirectory() || fs.existsSync(s.inside)) toInside(s);
      break;
    } catch { errors++; }
  }
}
process.stdout.write(JSON.stringify({ swaps, strays, errors, iterations: iteration }));
`;

export interface SwapReport {
  swaps: number;
  /** Directories Grove created while a swapped directory was briefly missing. */
  strays: number;
  errors: number;
  iterations: number;
}

export interface Swapper {
  /** Resolves when the swapper stopped (after its duration) with what it did. */
  readonly done: Promise<SwapReport>;
  /** True until the swapper has finished. */
  running(): boolean;
  /** Asks it to finish now (it leaves every target as its inside version and reports, as at the end). */
  stop(): void;
  kill(): void;
}

/** Starts a node process swapping `specs` for `durationMs`; resolves once it has started. */
export async function startSwapper(specs: SwapSpec[], durationMs: number): Promise<Swapper> {
  const stopFile = path.join(tmpdir(), `grove-swapper-stop-${randomBytes(8).toString('hex')}`);
  const child = spawn(
    process.execPath,
    ['-e', SWAPPER, JSON.stringify(specs), String(durationMs), stopFile],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  let finished = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<SwapReport>((resolve, reject) => {
    child.on('exit', (code) => {
      finished = true;
      if (code !== 0) reject(new Error(`swapper exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout) as SwapReport);
    });
  });
  done.catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
  const removeStopFile = () => rm(stopFile, { force: true }).catch(() => undefined);
  void done.then(removeStopFile, removeStopFile);
  return {
    done,
    running: () => !finished,
    stop: () => {
      if (!finished) writeFileSync(stopFile, '');
    },
    kill: () => child.kill(),
  };
}

// ---- A real worktree process, driven as the host drives it ----------------------------------

const WORKTREE_ENTRY = fileURLToPath(new URL('../worktree/worktree-process.ts', import.meta.url));

export interface RunningWorktree {
  child: ChildProcess;
  port: number;
  token: string;
  /** Every message the process sent to its host. */
  messages: WorktreeToHost[];
  /** Everything it wrote to stdout and stderr. */
  output(): string;
  /** Resident set size of the process (Linux: /proc/<pid>/status), in bytes. */
  rss(): Promise<number>;
  stop(): Promise<void>;
}

/** Forks worktree-process.ts for `root` on 127.0.0.1 (port 0) and waits for `listening`. */
export async function startWorktreeProcess(root: string): Promise<RunningWorktree> {
  const token = randomBytes(24).toString('hex');
  const child = fork(WORKTREE_ENTRY, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const messages: WorktreeToHost[] = [];
  child.on('message', (raw) => messages.push(WorktreeToHostSchema.parse(raw)));
  child.send({ type: 'start', root, port: 0, token, requireToken: true });
  await waitUntil(
    () => messages.some((message) => message.type === 'listening' || message.type === 'fatal'),
    20_000,
    'worktree process listening',
  );
  const listening = messages.find((message) => message.type === 'listening');
  if (listening?.type !== 'listening') {
    child.kill();
    throw new Error(`worktree process did not listen: ${JSON.stringify(messages)} ${output}`);
  }
  return {
    child,
    port: listening.port,
    token,
    messages,
    output: () => output,
    rss: async () => {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const match = /VmRSS:\s+(\d+) kB/.exec(status);
      return Number(match?.[1] ?? 0) * 1024;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'shutdown' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
