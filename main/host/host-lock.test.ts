// The data directory's host lock between real processes: a holder in a child process (which takes
// it with this module, as `grove serve` does), a second taker in this one; a host.lock that cannot
// be a lock (not writable by the user who starts Grove, a directory, a FIFO, not SQLite's) refused
// with what to do, the unwritable one by a child running as another user than root.
import {
  execFile,
  execFileSync,
  spawn,
  type ChildProcessWithoutNullStreams,
} from 'node:child_process';
import { chmod, chown, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../testing/temp-repo.ts';
import { UserError } from '../platform/errors.ts';
import {
  acquireHostLock,
  HOST_INFO_FILE,
  HOST_LOCK_FILE,
  HostRunningError,
  readHostInfo,
  type HostInfo,
} from './host-lock.ts';

const MODULE = fileURLToPath(new URL('./host-lock.ts', import.meta.url));

/**
 * A child process that takes the lock, publishes `running` with a UI URL, and on each line of its
 * stdin obeys: `stopping` (marks itself stopping), `release` (releases the lock).
 */
const HOLDER = `
import { createInterface } from 'node:readline';
const { acquireHostLock } = await import(process.argv[1]);
const lock = await acquireHostLock(process.argv[2], { shell: 'serve' });
lock.publish({ state: 'running', ui: 'http://127.0.0.1:47100/?token=t' });
console.log('held');
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'stopping') lock.publish({ state: 'stopping' });
  if (line === 'release') lock.release();
  console.log('done ' + line);
});
`;

interface Holder {
  child: ChildProcessWithoutNullStreams;
  /** Sends a command and waits for the holder to have done it. */
  tell(command: 'stopping' | 'release'): Promise<void>;
  exited: Promise<void>;
}

const holders: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const child of holders.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = path.join(await makeTempDir('grove-lock-'), 'data');
  dirs.push(path.dirname(dir));
  return dir;
}

async function startHolder(dir: string): Promise<Holder> {
  const child = spawn(process.execPath, ['--input-type=module', '--eval', HOLDER, MODULE, dir], {
    stdio: 'pipe',
  });
  holders.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = async (): Promise<string> => {
    const result = await lines.next();
    if (result.done) throw new Error(`the holder exited: ${stderr}`);
    return result.value;
  };
  expect(await next()).toBe('held');
  return {
    child,
    exited,
    async tell(command) {
      child.stdin.write(`${command}\n`);
      expect(await next()).toBe(`done ${command}`);
    },
  };
}

describe('the host lock', () => {
  it('refuses a second host, naming the first, and lets the next one in once it has gone', async () => {
    const dir = await dataDir();
    const holder = await startHolder(dir);
    const refusal = await acquireHostLock(dir, { shell: 'serve' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(HostRunningError);
    expect((refusal as Error).message).toBe(
      `Grove is already running for ${dir} (pid ${holder.child.pid}): http://127.0.0.1:47100/?token=t`,
    );
    expect((refusal as HostRunningError).holder).toMatchObject({
      state: 'running',
      shell: 'serve',
    });

    await holder.tell('release');
    const lock = await acquireHostLock(dir, { shell: 'app' });
    expect(readHostInfo(dir)).toEqual<HostInfo>({
      pid: process.pid,
      shell: 'app',
      state: 'starting',
      ui: null,
      startedAt: lock.info.startedAt,
    });
    // It holds the UI's token: the user's alone.
    expect((await stat(path.join(dir, HOST_INFO_FILE))).mode & 0o777).toBe(0o600);
    lock.release();
    expect(readHostInfo(dir)).toBeUndefined();
  });

  it('is not left behind by a host killed with SIGKILL', async () => {
    const dir = await dataDir();
    const holder = await startHolder(dir);
    holder.child.kill('SIGKILL');
    await holder.exited;
    // Its host.json is still there, naming a process that no longer exists: ignored.
    expect(JSON.parse(await readFile(path.join(dir, HOST_INFO_FILE), 'utf8'))).toMatchObject({
      pid: holder.child.pid,
      state: 'running',
    });
    expect(readHostInfo(dir)).toBeUndefined();
    const lock = await acquireHostLock(dir, { shell: 'serve' });
    expect(lock.info.pid).toBe(process.pid);
    lock.release();
  });

  it('waits for a host that is stopping, and says so once', async () => {
    const dir = await dataDir();
    const holder = await startHolder(dir);
    await holder.tell('stopping');
    const waitedFor: number[] = [];
    const taking = acquireHostLock(dir, {
      shell: 'serve',
      onWaiting: (stopping) => {
        waitedFor.push(stopping.pid);
        // Only now does the stopping host let go, as one whose worktree processes have exited.
        holder.child.stdin.write('release\n');
      },
    });
    const lock = await taking;
    expect(waitedFor).toEqual([holder.child.pid]);
    expect(lock.info.pid).toBe(process.pid);
    lock.release();
  });

  it('gives up on a host that does not finish stopping, naming it', async () => {
    const dir = await dataDir();
    const holder = await startHolder(dir);
    await holder.tell('stopping');
    const refusal = await acquireHostLock(dir, { shell: 'serve', stoppingWaitMs: 300 }).catch(
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(HostRunningError);
    expect((refusal as Error).message).toContain(`(pid ${holder.child.pid}): it has been stopping`);
  });
});

/** A child that tries to take the lock and says what happened, as one JSON line. */
const TAKER = `
const { acquireHostLock } = await import(process.argv[1]);
try {
  const lock = await acquireHostLock(process.argv[2], { shell: 'serve' });
  console.log(JSON.stringify({ held: true, uid: process.getuid() }));
  lock.release();
} catch (error) {
  console.log(JSON.stringify({ held: false, uid: process.getuid(), message: error.message, code: error.code }));
}
`;

interface Taken {
  held: boolean;
  uid: number;
  message?: string;
  code?: string;
}

/** Runs TAKER as `user` (uid and gid; undefined: as this process). */
function takeAs(dir: string, user?: { uid: number; gid: number }): Promise<Taken> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '--eval', TAKER, MODULE, dir],
      { ...user, env: { PATH: process.env.PATH ?? '' }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout) as Taken);
      },
    );
  });
}

/** Another user than root to run a host as: `nobody`, when this process is root and it exists. */
function otherUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const [uid, gid] = ['-u', '-g'].map((flag) =>
      Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim()),
    );
    return { uid: uid!, gid: gid! };
  } catch {
    return undefined;
  }
}

const root = process.getuid?.() === 0;
const nobody = reachableBy(otherUser());

/**
 * `user`, when it can run this checkout's Node and read its modules (a checkout under a 0700
 * folder, as `mktemp -d` makes, is closed to other users: .ci/run opens its folders for
 * traversal); undefined, with the reason printed, when it cannot.
 */
function reachableBy(
  user: { uid: number; gid: number } | undefined,
): { uid: number; gid: number } | undefined {
  if (!user) return undefined;
  try {
    execFileSync(
      process.execPath,
      ['--input-type=module', '--eval', `await import(${JSON.stringify(MODULE)})`],
      {
        ...user,
        env: { PATH: process.env.PATH ?? '' },
        stdio: 'pipe',
        timeout: 60_000,
      },
    );
    return user;
  } catch (error) {
    console.warn(
      `host-lock: the read-only host.lock case skipped: user ${user.uid} cannot run this checkout's Node (${String(error).split('\n')[0]})`,
    );
    return undefined;
  }
}

describe('a host.lock that cannot be a lock', () => {
  it.skipIf(process.platform === 'win32' || (root && nobody === undefined))(
    // (Skipped as root without a `nobody` user that can run this checkout: root writes any file,
    // so the case needs another user.)
    'refuses a host.lock the user cannot write, naming the file and the fix: never two hosts',
    { timeout: 60_000 },
    async () => {
      const dir = await dataDir();
      // The data directory is the user's; host.lock was left by a host run as root (sudo).
      await mkdir(dir, { mode: 0o700 });
      if (nobody) {
        await chown(path.dirname(dir), nobody.uid, nobody.gid);
        await chown(dir, nobody.uid, nobody.gid);
      }
      const lockFile = path.join(dir, HOST_LOCK_FILE);
      const user = nobody ?? { uid: process.getuid!(), gid: process.getgid!() };

      if (nobody) {
        // `sudo grove serve` runs on the user's data directory and holds the lock...
        const rootHost = await acquireHostLock(dir, { shell: 'serve' });
        expect((await stat(lockFile)).uid).toBe(0);
        // ...and the user's own `grove serve` must not run beside it (refused already for the
        // host.json root wrote, which the data directory's checks will not share).
        expect(await takeAs(dir, nobody)).toMatchObject({ held: false, code: 'refused' });
        rootHost.release();
        // Stopped, it leaves host.lock behind, still root's: the lock it would take locks nothing.
        expect(await takeAs(dir, nobody)).toEqual({
          held: false,
          uid: nobody.uid,
          code: 'refused',
          message:
            `cannot lock ${dir}: ${lockFile} is not writable by this user (owner uid 0, mode 0644), ` +
            `and a lock SQLite can only read locks nothing; it was left by Grove run as another ` +
            `user (sudo?): give it back with sudo chown ${nobody.uid}:${nobody.gid} '${lockFile}' ` +
            `(and chmod u+w), then start again`,
        });
        await chown(lockFile, nobody.uid, nobody.gid);
      } else {
        await writeFile(lockFile, '');
      }

      // The user's own file, made read-only: refused too, with the fix for that.
      await chmod(lockFile, 0o444);
      const readOnly = await takeAs(dir, user);
      expect(readOnly).toEqual({
        held: false,
        uid: user.uid,
        code: 'refused',
        message:
          `cannot lock ${dir}: ${lockFile} is not writable by this user (owner uid ${user.uid}, ` +
          `mode 0444), and a lock SQLite can only read locks nothing; make it writable ` +
          `(chmod u+w '${lockFile}'; if it is immutable: sudo chattr -i '${lockFile}') and start again`,
      });

      // Fixed as told: the lock is taken, and is a real one (a second taker is refused).
      await chmod(lockFile, 0o644);
      expect(await takeAs(dir, user)).toEqual({ held: true, uid: user.uid });
      const holder = await startHolderAs(dir, user);
      expect(await takeAs(dir, user)).toMatchObject({ held: false, code: 'busy' });
      holder.kill('SIGKILL');
    },
  );

  it('says what to do with a host.lock that is a directory, a FIFO, a symlink or not SQLite', async () => {
    const dir = await dataDir();
    await mkdir(dir, { mode: 0o700 });
    const lockFile = path.join(dir, HOST_LOCK_FILE);
    const refusal = async (): Promise<UserError> => {
      const error = await acquireHostLock(dir, { shell: 'serve' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UserError);
      expect((error as UserError).code).toBe('refused');
      return error as UserError;
    };

    await mkdir(lockFile);
    expect((await refusal()).message).toBe(
      `cannot lock ${dir}: ${lockFile} is a directory, not the empty file Grove locks; ` +
        `remove it (rm -r '${lockFile}') and start again`,
    );
    await rm(lockFile, { recursive: true });

    // A FIFO is never opened (reading one would wait for a writer forever).
    execFileSync('mkfifo', [lockFile]);
    expect((await refusal()).message).toBe(
      `cannot lock ${dir}: ${lockFile} is a FIFO (named pipe), not the empty file Grove locks; ` +
        `remove it (rm '${lockFile}') and start again`,
    );
    await rm(lockFile);

    await symlink(path.join(dir, 'elsewhere'), lockFile);
    expect((await refusal()).message).toContain(
      `${lockFile} is a symbolic link, not the empty file`,
    );
    await rm(lockFile);

    await writeFile(lockFile, 'not what Grove wrote\n'.repeat(300));
    expect((await refusal()).message).toBe(
      `cannot lock ${dir}: ${lockFile} is not Grove's lock file (file is not a database): ` +
        `once no Grove runs on ${dir}, remove it (rm '${lockFile}') and start again; ` +
        `Grove makes a new one`,
    );
    // Nothing of it was changed or left beside it.
    expect(await readFile(lockFile, 'utf8')).toBe('not what Grove wrote\n'.repeat(300));

    await rm(lockFile);
    const lock = await acquireHostLock(dir, { shell: 'serve' });
    expect(lock.info.pid).toBe(process.pid);
    lock.release();
  });
});

/** A holder (HOLDER) running as `user`; resolves once it holds the lock. */
async function startHolderAs(
  dir: string,
  user: { uid: number; gid: number },
): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(process.execPath, ['--input-type=module', '--eval', HOLDER, MODULE, dir], {
    stdio: 'pipe',
    ...user,
    env: { PATH: process.env.PATH ?? '' },
  });
  holders.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const first = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  if (first.value !== 'held') throw new Error(`the holder did not take the lock: ${stderr}`);
  return child;
}
