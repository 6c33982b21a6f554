// One host per data directory. A host (`grove serve` or the app) holds an OS-level lock on
// `<dataDir>/host.lock` for as long as it runs: an SQLite connection in exclusive locking mode with
// a write transaction begun and never ended, i.e. a POSIX fcntl lock (LockFileEx on Windows) that
// the kernel releases when the process dies, however it dies — a SIGKILLed host never leaves a
// stale lock behind. Beside it, `<dataDir>/host.json` (written atomically, 0600: it holds the UI
// URL with its token) says who holds it: pid, shell, state (starting, running, stopping) and UI URL.
//
// A second host finds the lock held and reads who: a running (or starting) host is refused with a
// message naming it; a host that is stopping is waited for (bounded), because a restart is SIGTERM
// then a new start at once, and the stopping host releases the lock only after its worktree
// processes have exited (their ports are free). Why SQLite and not a PID file or another lock:
// docs/decisions.md. Two rules keep the lock held: its connection is referenced for as long as it
// is held (a collected connection closes), and nothing else in the process ever opens host.lock
// (closing any descriptor of a file drops every fcntl lock the process has on it) — except SQLite
// itself, whose connections in one process share their locks and never close a descriptor of a
// file another of them holds locked.
//
// A lock that locks nothing is refused: SQLite opens a file it cannot write read-only without a
// word (a host.lock left owned by root by `sudo grove serve`, mode 0444, immutable, a read-only
// file system), and BEGIN EXCLUSIVE then "succeeds" while holding no lock at all. So host.lock must
// be a regular file this user can write, and once taken, the lock is proved held: a second,
// read-only connection of this process must find the file locked (SQLITE_BUSY). A host.lock that
// is a directory, FIFO, symlink or not an SQLite file is refused too, each saying what to do.
import Database from 'better-sqlite3';
import {
  accessSync,
  constants,
  closeSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../platform/errors.ts';
import { secureDataDirectory } from './data-directory.ts';

export const HOST_LOCK_FILE = 'host.lock';
export const HOST_INFO_FILE = 'host.json';
/** How long a new host waits for a stopping one to release the lock. */
export const STOPPING_WAIT_MS = 15_000;
/**
 * How long a lock held by a process that has not said (yet) who it is, or that says it is running,
 * is watched before giving up: the holder may be writing its host.json, or have just received the
 * SIGTERM of a restart and be about to say `stopping`.
 */
export const SETTLE_MS = 1_500;
const POLL_MS = 100;

export const HostInfoSchema = z.object({
  pid: z.number().int().positive(),
  /** Which shell runs the host: `grove serve` or the desktop app. */
  shell: z.enum(['serve', 'app']),
  state: z.enum(['starting', 'running', 'stopping']),
  /** The UI's URL with its token (`grove serve` with a UI), else null. */
  ui: z.string().nullable(),
  startedAt: z.number(),
});
export type HostInfo = z.infer<typeof HostInfoSchema>;

/** Another host holds the data directory's lock (and is not stopping, or did not stop in time). */
export class HostRunningError extends UserError {
  readonly dataDir: string;
  /** Who holds it, when it said so. */
  readonly holder: HostInfo | undefined;

  constructor(dataDir: string, holder: HostInfo | undefined, stillStopping = false) {
    super(describeHolder(dataDir, holder, stillStopping), { code: 'busy' });
    this.dataDir = dataDir;
    this.holder = holder;
  }
}

function describeHolder(
  dataDir: string,
  holder: HostInfo | undefined,
  stillStopping: boolean,
): string {
  if (holder === undefined) {
    return `Grove is already running for ${dataDir} (another process holds ${path.join(dataDir, HOST_LOCK_FILE)})`;
  }
  if (stillStopping) {
    return (
      `Grove is already running for ${dataDir} (pid ${holder.pid}): it has been stopping for ` +
      `over ${STOPPING_WAIT_MS / 1000} s; wait for it to exit or end it`
    );
  }
  const where =
    holder.ui ?? (holder.shell === 'app' ? 'the Grove app' : 'grove serve, without a UI');
  return `Grove is already running for ${dataDir} (pid ${holder.pid}): ${where}`;
}

export interface HostLock {
  /** What host.json says now. */
  readonly info: HostInfo;
  /** Updates host.json (atomically). */
  publish(changes: Partial<Pick<HostInfo, 'state' | 'ui'>>): void;
  /** Removes host.json and releases the lock. Idempotent; process exit releases it too. */
  release(): void;
}

export interface AcquireOptions {
  shell: HostInfo['shell'];
  /** Called once when the lock is held by a host that is stopping, before waiting for it. */
  onWaiting?(holder: HostInfo): void;
  /** Overrides STOPPING_WAIT_MS (tests). */
  stoppingWaitMs?: number;
}

/**
 * Takes the data directory's host lock, waiting for a host that is stopping; throws a
 * HostRunningError naming the holder when another host runs there. Creates the data directory
 * (private) if needed.
 */
export async function acquireHostLock(dataDir: string, options: AcquireOptions): Promise<HostLock> {
  await secureDataDirectory(dataDir);
  const lockFile = path.join(dataDir, HOST_LOCK_FILE);
  let waitingSince: number | undefined;
  let unsettledSince: number | undefined;
  let lastHolder: HostInfo | undefined;
  for (;;) {
    const connection = tryLock(dataDir, lockFile);
    if (connection) return heldLock(dataDir, connection, options.shell);
    const holder = readHostInfo(dataDir);
    const now = Date.now();
    if (holder?.state === 'stopping') {
      unsettledSince = undefined;
      if (waitingSince === undefined) {
        waitingSince = now;
        options.onWaiting?.(holder);
      }
      if (now - waitingSince > (options.stoppingWaitMs ?? STOPPING_WAIT_MS)) {
        throw new HostRunningError(dataDir, holder, true);
      }
    } else {
      // Running, starting, or not said (yet): watch a moment before refusing (see SETTLE_MS).
      lastHolder = holder ?? lastHolder;
      unsettledSince ??= now;
      if (now - unsettledSince > SETTLE_MS) throw new HostRunningError(dataDir, lastHolder);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * What host.json says of the host holding the lock, or undefined when it says nothing usable or
 * names a process that no longer exists (what a crashed host left). It does not take the lock.
 */
export function readHostInfo(dataDir: string): HostInfo | undefined {
  let text: string;
  try {
    const fd = openSync(
      path.join(dataDir, HOST_INFO_FILE),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    try {
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  let parsed;
  try {
    parsed = HostInfoSchema.safeParse(JSON.parse(text));
  } catch {
    return undefined;
  }
  return parsed.success && processExists(parsed.data.pid) ? parsed.data : undefined;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The lock's connection when this process could take it, else undefined (another holds it).
 * Throws a UserError saying what to do when host.lock cannot be a lock: not a regular file, not
 * writable by this user, not an SQLite file, or a lock SQLite took without holding it.
 */
function tryLock(dataDir: string, lockFile: string): Database.Database | undefined {
  checkLockFile(dataDir, lockFile);
  const connection = new Database(lockFile, { timeout: 0 });
  try {
    connection.pragma('locking_mode = EXCLUSIVE');
    // BEGIN EXCLUSIVE takes SQLite's exclusive lock on the file at once; in exclusive locking
    // mode it is kept until the connection closes (or this process ends).
    connection.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    connection.close();
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY') return undefined;
    throw lockFileRefusal(dataDir, lockFile, error);
  }
  const notHeld = lockNotHeld(lockFile);
  if (notHeld !== undefined) {
    connection.close();
    throw new UserError(
      `cannot lock ${dataDir}: SQLite opened ${lockFile} but holds no lock on it (${notHeld}); ` +
        `${unwritableFix(lockFile)}`,
      { code: 'refused' },
    );
  }
  return connection;
}

/**
 * Why the lock just taken is not held, or undefined when it is: a read-only connection of this
 * process must find the file locked. (SQLite keeps the probe's descriptor open past its close while
 * the lock connection holds the file, so the probe never drops the lock.)
 */
function lockNotHeld(lockFile: string): string | undefined {
  let probe: Database.Database | undefined;
  try {
    probe = new Database(lockFile, { timeout: 0, readonly: true });
    probe.prepare('SELECT count(*) FROM sqlite_master').get();
    return 'another connection could still read it';
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    return error instanceof Error ? error.message : String(error);
  } finally {
    probe?.close();
  }
}

/** Refuses a host.lock that is not a regular file this user can write, saying what to do. */
function checkLockFile(dataDir: string, lockFile: string): void {
  let stats: Stats;
  try {
    stats = lstatSync(lockFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // SQLite creates it
    throw error;
  }
  if (!stats.isFile()) {
    const what = stats.isDirectory()
      ? 'a directory'
      : stats.isSymbolicLink()
        ? 'a symbolic link'
        : stats.isFIFO()
          ? 'a FIFO (named pipe)'
          : stats.isSocket()
            ? 'a socket'
            : 'a device';
    throw new UserError(
      `cannot lock ${dataDir}: ${lockFile} is ${what}, not the empty file Grove locks; ` +
        `remove it (${stats.isDirectory() ? 'rm -r' : 'rm'} '${lockFile}') and start again`,
      { code: 'refused' },
    );
  }
  try {
    // access(2) asks what opening it for writing would meet (mode, owner, immutable, read-only
    // mounts), without opening it: a descriptor closed here would drop this process's locks.
    accessSync(lockFile, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') throw error;
    throw new UserError(
      `cannot lock ${dataDir}: ${lockFile} is not writable by this user ` +
        `(${describeFile(stats)}${code === 'EROFS' ? ', on a read-only file system' : ''}), ` +
        `and a lock SQLite can only read locks nothing; ${unwritableFix(lockFile, stats)}`,
      { code: 'refused', cause: error },
    );
  }
}

/** Owner and mode of a file, as `ls -l` would show what matters here. */
function describeFile(stats: Stats): string {
  const mode = (stats.mode & 0o7777).toString(8).padStart(4, '0');
  return process.platform === 'win32' ? `mode ${mode}` : `owner uid ${stats.uid}, mode ${mode}`;
}

/** What the user does about a host.lock this user cannot write. */
function unwritableFix(lockFile: string, stats?: Stats): string {
  if (process.platform === 'win32') {
    return `clear its read-only attribute (attrib -R "${lockFile}") and start again`;
  }
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (stats !== undefined && uid !== undefined && stats.uid !== uid) {
    // Removing it while a host of that other user holds it would let two hosts run: give it back.
    return (
      `it was left by Grove run as another user (sudo?): give it back with ` +
      `sudo chown ${uid}:${gid} '${lockFile}' (and chmod u+w), then start again`
    );
  }
  return (
    `make it writable (chmod u+w '${lockFile}'; if it is immutable: sudo chattr -i '${lockFile}') ` +
    `and start again`
  );
}

/** A host.lock SQLite refused to open or lock (not busy): what it is and what to do. */
function lockFileRefusal(dataDir: string, lockFile: string, error: unknown): UserError {
  const code = (error as { code?: string }).code ?? '';
  const reason = error instanceof Error ? error.message : String(error);
  const holder = readHostInfo(dataDir);
  const once = holder
    ? `once Grove (pid ${holder.pid}) has stopped`
    : `once no Grove runs on ${dataDir}`;
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new UserError(
      `cannot lock ${dataDir}: ${lockFile} is not Grove's lock file (${reason}): ` +
        `${once}, remove it (rm '${lockFile}') and start again; Grove makes a new one`,
      { code: 'refused', cause: error },
    );
  }
  return new UserError(`cannot lock ${dataDir}: ${lockFile}: ${reason}`, {
    code: 'refused',
    cause: error,
  });
}

/**
 * Every live lock's connection. The lock lives exactly as long as its connection: one that is
 * garbage collected is closed, and its lock released, while its host still runs.
 */
const heldConnections = new Set<Database.Database>();

function heldLock(
  dataDir: string,
  connection: Database.Database,
  shell: HostInfo['shell'],
): HostLock {
  heldConnections.add(connection);
  const infoFile = path.join(dataDir, HOST_INFO_FILE);
  let info: HostInfo = {
    pid: process.pid,
    shell,
    state: 'starting',
    ui: null,
    startedAt: Date.now(),
  };
  let released = false;
  writeInfo(infoFile, info);
  return {
    get info() {
      return info;
    },
    publish(changes) {
      if (released) return;
      info = { ...info, ...changes };
      writeInfo(infoFile, info);
    },
    release() {
      if (released) return;
      released = true;
      rmSync(infoFile, { force: true });
      heldConnections.delete(connection);
      connection.close(); // ends the transaction and releases the lock
    },
  };
}

/** Writes host.json atomically: a private temporary file beside it, renamed over it. */
function writeInfo(infoFile: string, info: HostInfo): void {
  const temporary = `${infoFile}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  const fd = openSync(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    writeSync(fd, `${JSON.stringify(info)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, infoFile);
}
