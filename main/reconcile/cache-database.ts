// One SQLite file in `<root>/.notarai/.cache/` (better-sqlite3), opened only through the confined
// layer's checks: NotarAI's `notarai.db` and Grove's own `grove-stats.db` (hash-cache.ts) each get
// one. The file is created on demand (the directory gets a `.gitignore`), reopened when someone
// else deletes or replaces it, and recreated with a warning when it is corrupt or `prepare` says
// its schema is not the expected one (checked again whenever the schema changes under an open
// connection); it is a cache, so losing it only costs time. SQLite's own busy handler would sleep
// on the event loop, so it is off and `use` retries on a timer instead.
// Work on a connection may span several turns of the event loop (a 100,000-row transaction is
// written in slices), so the uses of one file run one after another.
import Database from 'better-sqlite3';
import path from 'node:path';
import {
  entryKind,
  ensureDirectoryInsideRoot,
  lstatEntriesInsideRoot,
  removeFileInsideRoot,
  writeFileAtomicInsideRoot,
  type Stats,
} from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';

export const CACHE_DIR = '.notarai/.cache';

const CORRUPT_CODES = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CANTOPEN']);

/**
 * How long one call waits, in all, for another process (NotarAI's CLI, a backup tool, an editor
 * extension) to release its lock on a cache file. SQLite's own busy handler sleeps on the thread
 * that asked, which here is the event loop, so it is off (`busy_timeout = 0`): a locked database
 * fails at once and the call retries on a timer (5 ms, doubling to 200 ms) while other clients are
 * served.
 */
export const LOCK_WAIT_MS = 10_000;

export interface CacheDatabaseOptions {
  /** Real path of the worktree root. */
  root: string;
  /** File name inside CACHE_DIR. */
  name: string;
  /** What the file is, for messages ("the hash cache", "Grove's stat cache"). */
  label: string;
  /**
   * Checks (and creates) the schema of a freshly opened connection. Throw an error whose `code` is
   * `SQLITE_CORRUPT` to have the file deleted and recreated with a warning.
   */
  prepare: (db: Database.Database) => void;
  /** Called with each warning (a file recreated). */
  warn: (message: string) => void;
  /** What losing the file's rows means, for the warning ("... count as changed again"). */
  whenLost: string;
  lockWaitMs?: number;
}

/** An error that makes `use` recreate the file, as for a corrupt one. */
export function schemaMismatch(message: string): Error {
  return Object.assign(new Error(message), { code: 'SQLITE_CORRUPT' });
}

export class CacheDatabase {
  /** POSIX path relative to the root, e.g. `.notarai/.cache/notarai.db`. */
  readonly relative: string;
  readonly absolute: string;
  readonly #options: CacheDatabaseOptions;
  /** The database and the files SQLite keeps beside it (first: the database). */
  readonly #files: string[];
  readonly #lockWaitMs: number;
  #db: Database.Database | undefined;
  /** Inode of the file #db was opened on (to notice deletion or replacement by another tool). */
  #ino: number | undefined;
  /** `PRAGMA schema_version` once `prepare` checked the schema (changed: checked again). */
  #schemaVersion: number | undefined;
  /** The last use queued: each use starts once the one before it has ended. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Closed for good (closeForGood): a use still queued opens the file, then closes it again. */
  #closedForGood = false;

  constructor(options: CacheDatabaseOptions) {
    this.#options = options;
    this.relative = `${CACHE_DIR}/${options.name}`;
    this.absolute = path.join(options.root, this.relative);
    this.#files = ['', '-journal', '-wal', '-shm'].map((suffix) => `${options.name}${suffix}`);
    this.#lockWaitMs = options.lockWaitMs ?? LOCK_WAIT_MS;
  }

  exists(): boolean {
    return this.#inspect()?.isFile() === true;
  }

  /**
   * The database file's lstat (undefined when missing), after proving that nothing in the cache
   * directory leads elsewhere: `.notarai/.cache` is walked without following symlinks, and a
   * symlink, directory or special file where SQLite keeps the database, its journal or its WAL is a
   * UserError naming it (SQLite would follow it, and replay or overwrite whatever it points at).
   */
  #inspect(): Stats | undefined {
    const entries = lstatEntriesInsideRoot(this.#options.root, CACHE_DIR, this.#files);
    if (!entries) return undefined;
    entries.forEach((stats, index) => {
      const kind = entryKind(stats);
      if (kind === 'missing' || kind === 'file') return;
      const what = kind === 'special' ? 'a special file (FIFO, socket or device)' : `a ${kind}`;
      throw new UserError(
        `${this.#options.label}'s ${CACHE_DIR}/${this.#files[index]} is ${what}, which Grove ` +
          'never opens; delete it (the cache is rebuilt) and try again',
      );
    });
    return entries[0];
  }

  /**
   * Runs `work` on an open database, after the uses queued before it. `createIfMissing` false:
   * does nothing when there is no file. While another process holds a lock, retries on a timer for
   * up to the lock budget (counted from this call, its wait in the queue included), then ends the
   * call with a UserError saying so (a transaction that met the lock was rolled back whole).
   */
  use(
    createIfMissing: boolean,
    work: (db: Database.Database) => void | Promise<void>,
  ): Promise<void> {
    // The budget runs from the call, not from its turn: calls queued behind one that waits for
    // the lock would otherwise each get a budget of their own, one after another.
    const deadline = Date.now() + this.#lockWaitMs;
    return this.#inTurn(() => this.#useRetrying(createIfMissing, work, deadline));
  }

  /** Closes the connection and deletes the files, once the uses queued before have ended. */
  removeInTurn(): Promise<boolean> {
    return this.#inTurn(() => Promise.resolve(this.remove()));
  }

  /**
   * Closes the connection now (a use in progress fails) and after each use still queued (the
   * worktree process is ending: no connection is left open).
   */
  closeForGood(): void {
    this.#closedForGood = true;
    this.close();
  }

  #inTurn<T>(run: () => Promise<T>): Promise<T> {
    const turn = this.#queue.then(run).finally(() => {
      if (this.#closedForGood) this.close();
    });
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  async #useRetrying(
    createIfMissing: boolean,
    work: (db: Database.Database) => void | Promise<void>,
    deadline: number,
  ): Promise<void> {
    for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
      try {
        await this.#useUnlocked(createIfMissing, work);
        return;
      } catch (error) {
        if (!isLocked(error)) throw error;
        if (Date.now() + delay > deadline) {
          throw new UserError(
            `${this.#options.label} ${this.relative} is locked by another process (NotarAI's ` +
              `CLI, a backup tool or an editor extension?) and stayed locked for ` +
              `${this.#lockWaitMs / 1000} s; try again`,
            { code: 'busy' },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** One attempt of use: a corrupt database is recreated (with a warning) and `work` retried once. */
  async #useUnlocked(
    createIfMissing: boolean,
    work: (db: Database.Database) => void | Promise<void>,
  ): Promise<void> {
    let create = createIfMissing;
    for (let attempt = 0; attempt < 2; attempt++) {
      const db = await this.#open(create);
      if (!db) return;
      try {
        await work(db);
        return;
      } catch (error) {
        if (!isCorruption(error) || attempt > 0) throw error;
        await this.#recreate(error);
        create = true;
      }
    }
  }

  /**
   * Closes the connection and deletes the file and its companions at once (a use in progress
   * fails). True if the file existed.
   */
  remove(): boolean {
    this.close();
    const removed = this.#files.map((name) =>
      removeFileInsideRoot(this.#options.root, `${CACHE_DIR}/${name}`),
    );
    return removed[0] === true;
  }

  close(): void {
    try {
      this.#db?.close();
    } catch {
      // already closed
    }
    this.#db = undefined;
    this.#ino = undefined;
    this.#schemaVersion = undefined;
  }

  async #open(create: boolean): Promise<Database.Database | undefined> {
    const info = this.#inspect();
    if (this.#db && info && info.ino === this.#ino) {
      // Another connection (NotarAI's CLI, any tool) may have changed the schema in place since
      // `prepare` checked it: if so, reconnect, so that it is checked again.
      const version = schemaVersionOf(this.#db);
      if (version !== undefined && version === this.#schemaVersion) return this.#db;
    }
    this.close();
    if (!info && !create) return undefined;
    if (!info) await this.#prepareDirectory();
    try {
      return await this.#connect();
    } catch (error) {
      if (!isCorruption(error)) throw error;
      await this.#recreate(error);
      return await this.#connect();
    }
  }

  /**
   * Opens the checked database. SQLite works by path, so what it could do through a directory
   * swapped for a symlink after the check is kept to nothing: the file is created beforehand by the
   * confined layer and opened without O_CREAT (`fileMustExist`), the name SQLite resolved must be
   * the one checked, and the connection keeps its rollback journal in memory, so it never creates
   * or deletes a file beside the database (NotarAI's CLI keeps its own journal mode; a cache damaged
   * by a crash mid-write is recreated).
   */
  async #connect(): Promise<Database.Database> {
    if (!this.#inspect()) await writeFileAtomicInsideRoot(this.#options.root, this.relative, '');
    const db = new Database(this.absolute, { fileMustExist: true });
    let schemaVersion: number | undefined;
    try {
      // The file SQLite opened must be the one checked (SQLite resolves symlinks in the name: a
      // directory swapped for a link since the check shows up here as another path).
      const main = (db.pragma('database_list') as { name: string; file: string }[]).find(
        (entry) => entry.name === 'main',
      );
      if (main?.file !== this.absolute) {
        throw new UserError(
          `${this.#options.label} ${this.relative} changed while it was being opened; try again`,
          { code: 'busy' },
        );
      }
      db.pragma('busy_timeout = 0'); // never sleep on the event loop: use() retries on a timer
      // The file is untrusted (it may have been committed): no SQL function runs from its schema
      // unless SQLite knows it to be harmless. `prepare` refuses any schema but the expected one;
      // this only limits what a schema it failed to refuse could do.
      db.pragma('trusted_schema = OFF');
      db.pragma('journal_mode = MEMORY');
      // This connection only (the file format stays as it is): a big page cache for 200,000-row
      // batches, and fewer fsyncs; a cache damaged by a power cut is recreated anyway.
      db.pragma('cache_size = -65536');
      db.pragma('synchronous = NORMAL');
      this.#options.prepare(db);
      schemaVersion = schemaVersionOf(db);
    } catch (error) {
      db.close();
      throw error;
    }
    const info = this.#inspect();
    if (!info) {
      db.close();
      throw new UserError(
        `${this.#options.label} ${this.relative} vanished while it was being opened; try again`,
      );
    }
    this.#db = db;
    this.#ino = info.ino;
    this.#schemaVersion = schemaVersion;
    return db;
  }

  async #recreate(cause: unknown): Promise<void> {
    this.#options.warn(
      `${this.#options.label} ${this.relative} was unreadable (${
        cause instanceof Error ? cause.message : String(cause)
      }) and has been recreated empty: ${this.#options.whenLost}`,
    );
    this.remove();
    await this.#prepareDirectory();
  }

  /** Creates the cache directory (never through a symlink) and its `.gitignore`. */
  async #prepareDirectory(): Promise<void> {
    ensureDirectoryInsideRoot(this.#options.root, CACHE_DIR);
    const [ignore] = lstatEntriesInsideRoot(this.#options.root, CACHE_DIR, ['.gitignore']) ?? [];
    if (!ignore) {
      await writeFileAtomicInsideRoot(
        this.#options.root,
        `${CACHE_DIR}/.gitignore`,
        '# Created by Grove: the NotarAI hash cache is local state.\n*\n',
      );
    }
  }
}

/**
 * Runs `work` in one transaction that may span several turns of the event loop (its writes in
 * slices): committed when it ends, rolled back whole if it throws. Only inside `use`, which keeps
 * every other use of the connection waiting meanwhile.
 */
export async function inSlicedTransaction(
  db: Database.Database,
  work: () => Promise<void>,
): Promise<void> {
  db.exec('BEGIN');
  try {
    await work();
    db.exec('COMMIT');
  } catch (error) {
    if (db.open && db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/** The schema's version; undefined when it cannot be read (reconnecting then says why). */
function schemaVersionOf(db: Database.Database): number | undefined {
  try {
    return db.pragma('schema_version', { simple: true }) as number;
  } catch {
    return undefined;
  }
}

function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
  );
}

function isCorruption(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && CORRUPT_CODES.has(code);
}
