// The data directory's host lock between real processes: a holder in a child process (which takes
// it with this module, as `grove serve` does), a second taker in this one.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../testing/temp-repo.ts';
import {
  acquireHostLock,
  HOST_INFO_FILE,
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
