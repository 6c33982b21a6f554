// One SQLite file in `<root>/.notarai/.cache/` (better-sqlite3), opened only through the confined
// layer's checks: NotarAI's `notarai.db` and Grove's own `grove-stats.db` (hash-cache.ts) each get
// one. The file is created on demand (the directory gets a `.gitignore`), reopened when someone
// else deletes or replaces it, and recreated with a warning when it is corrupt or its schema is not
// the expected one (checked again whenever the schema changes under an open connection); it is a
// cache, so losing it only costs time. SQLite's own busy handler would sleep on the event loop, so
// it is off and `use` retries on a timer instead.
// The file is untrusted (a repository can commit it), and SQLite loads a schema in one synchronous
// go, whatever its size: before a connection reads anything, a rollback journal beside the file is
// played back on a worker thread, a write-ahead log beside it is refused, and Grove reads the
// first page itself (sqlite-file.ts) and goes on only if the whole schema is there, holding what
// `checkFirstPage` accepts. Then `prepare` checks the schema as SQLite loaded it.
// Work on a connection may span several turns of the event loop (a 100,000-row transaction is
// written in slices), so the uses of one file run one after another.
import type Database from 'better-sqlite3';
import path from 'node:path';
import {
  entryKind,
  ensureDirectoryInsideRoot,
  lstatEntriesInsideRoot,
  readHeadInsideRoot,
  removeFileInsideRoot,
  writeFileAtomicInsideRoot,
  type Stats,
} from '../../platform/confined-fs.ts';
import { UserError } from '../../platform/errors.ts';
import { WorkersUnavailableError, workerPool } from '../../platform/worker-pool.ts';
import {
  openSqlite,
  MAX_PAGE_SIZE,
  PATH_CHANGED,
  readFirstPage,
  replayJournal,
  type SchemaObject,
  type SqliteFailure,
} from './sqlite-file.ts';

export const CACHE_DIR = '.notarai/.cache';

/** SQLite's file header, and where in it the file change counter is (a 32-bit big-endian). */
const SQLITE_HEADER_BYTES = 100;
const CHANGE_COUNTER_AT = 24;

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
   * Checks the schema as read from the file's first page, before SQLite loads it (the page holds
   * the whole schema, or the file is never handed to SQLite). Throw schemaMismatch to have the
   * file recreated.
   */
  checkFirstPage: (objects: readonly SchemaObject[]) => void;
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
    return this.#inspect()?.database?.isFile() === true;
  }

  /**
   * Which file this is, or `none`: another file, or none, is another value. Its device, inode and
   * birth time (a file made where one was deleted often gets its inode; where the file system
   * keeps no birth time, Node gives 0 and the inode alone tells).
   */
  fileIdentity(): string {
    const database = this.#inspect()?.database;
    if (database?.isFile() !== true) return 'none';
    return `${database.dev}:${database.ino}:${database.birthtimeMs}`;
  }

  /**
   * What identifies the file's present contents, for a memory of what was computed from them
   * (classification-store.ts): its lstat (device, inode, size, change and modification times)
   * and the change counter of SQLite's header (bytes 24-27, moved by every write transaction in
   * rollback-journal mode, the only one NotarAI and Grove use; a file replaced keeps none of it).
   * Undefined when there is no file, or when a journal or WAL beside it could change what SQLite
   * reads. Taken before a read, it names contents at least as old as what the read sees.
   */
  async fingerprint(): Promise<string | undefined> {
    const files = this.#inspect();
    const database = files?.database;
    if (database?.isFile() !== true || companionToSettle(files)) return undefined;
    const head = await readHeadInsideRoot(this.#options.root, this.relative, SQLITE_HEADER_BYTES);
    if (head.length < SQLITE_HEADER_BYTES) return undefined;
    const { dev, ino, size, mtimeMs, ctimeMs } = database;
    return [dev, ino, size, mtimeMs, ctimeMs, head.readUInt32BE(CHANGE_COUNTER_AT)].join(':');
  }

  /**
   * The lstat of the database file and of the files SQLite reads beside it (each undefined when
   * missing; all undefined when the directory is), after proving that nothing in the cache
   * directory leads elsewhere: `.notarai/.cache` is walked without following symlinks, and a
   * symlink, directory or special file where SQLite keeps the database, its journal or its WAL is a
   * UserError naming it (SQLite would follow it, and replay or overwrite whatever it points at).
   */
  #inspect(): CacheFiles | undefined {
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
    const [database, journal, wal] = entries;
    return { database, journal, wal };
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
    const files = this.#inspect();
    const info = files?.database;
    // A journal or WAL beside the file (another process writing, a write cut short, or a checkout
    // that brought one): the open connection's next read could take another schema from it, so
    // reconnect, which settles it first.
    if (this.#db && info && info.ino === this.#ino && !companionToSettle(files)) {
      // Another connection (NotarAI's CLI, any tool) may have changed the schema in place since
      // `prepare` checked it: if so, reconnect, so that it is checked again. (The version is read
      // from the file's header; SQLite loads the schema only on a statement that needs it.)
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
   * by a crash mid-write is recreated). Before that, what lies beside the file is settled and the
   * first page checked (#settleCompanions, #checkFirstPage): SQLite is handed only a file whose
   * whole schema it loads in microseconds.
   */
  async #connect(): Promise<Database.Database> {
    if (!this.#inspect()?.database) {
      await writeFileAtomicInsideRoot(this.#options.root, this.relative, '');
    }
    await this.#settleCompanions();
    await this.#checkFirstPage();
    const db = openSqlite(this.absolute, { fileMustExist: true });
    let schemaVersion: number | undefined;
    try {
      // The file SQLite opened must be the one checked (SQLite resolves symlinks in the name: a
      // directory swapped for a link since the check shows up here as another path).
      const main = (db.pragma('database_list') as { name: string; file: string }[]).find(
        (entry) => entry.name === 'main',
      );
      if (main?.file !== this.absolute) throw this.#changedWhileOpening();
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
    const info = this.#inspect()?.database;
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

  /**
   * What SQLite would read beside the database on its first read. A write-ahead log is a schema
   * mismatch (the file is recreated, the log with it): neither NotarAI nor Grove writes one, and
   * SQLite would take pages from it, page 1 included, whatever the file says. A rollback journal is
   * played back on a worker thread (replayJournal): a hot one (a write cut short, or one committed)
   * writes its pages into the file before the first page is checked, and a big one costs the event
   * loop nothing. A journal of a write in progress is left alone (its writer holds the lock).
   */
  async #settleCompanions(): Promise<void> {
    const files = this.#inspect();
    if (files?.wal) {
      throw schemaMismatch(
        `a write-ahead log (${this.#files[2]}) lies beside it, which neither NotarAI nor Grove ` +
          'writes (SQLite would read the schema from it)',
      );
    }
    if (!companionToSettle(files)) return;
    let failure: SqliteFailure | undefined;
    try {
      failure = await workerPool().run<SqliteFailure | undefined>(
        'sqlite-replay-journal',
        this.absolute,
      );
    } catch (error) {
      if (!(error instanceof WorkersUnavailableError)) throw error;
      // No worker threads (a bundle without the worker entry): here, as SQLite's own first read
      // would have done.
      failure = replayJournal(this.absolute);
    }
    if (failure?.code === PATH_CHANGED) throw this.#changedWhileOpening();
    // A lock is retried on a timer by `use`; a corrupt file or journal is recreated.
    if (failure) throw Object.assign(new Error(failure.message), { code: failure.code });
  }

  #changedWhileOpening(): UserError {
    return new UserError(
      `${this.#options.label} ${this.relative} changed while it was being opened; try again`,
      { code: 'busy' },
    );
  }

  /**
   * Reads the file's first page through the confined layer (at most MAX_PAGE_SIZE bytes, one read)
   * and decodes its schema: one that does not fit in that page, or that `checkFirstPage` refuses,
   * is a schema mismatch, and SQLite never loads it.
   */
  async #checkFirstPage(): Promise<void> {
    const head = await readHeadInsideRoot(this.#options.root, this.relative, MAX_PAGE_SIZE);
    const page = readFirstPage(head);
    if ('problem' in page) throw schemaMismatch(page.problem);
    this.#options.checkFirstPage(page.objects);
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

/** The database file and the files SQLite reads beside it, as lstat saw them. */
interface CacheFiles {
  database: Stats | undefined;
  journal: Stats | undefined;
  wal: Stats | undefined;
}

/**
 * True when SQLite's next read could take pages from beside the file: a write-ahead log, or a
 * rollback journal that is not empty (an empty one is never played back).
 */
function companionToSettle(files: CacheFiles | undefined): boolean {
  return files?.wal !== undefined || (files?.journal?.size ?? 0) > 0;
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
