// The hash cache of one worktree: `<root>/.notarai/.cache/notarai.db` (better-sqlite3). Owns
// NotarAI's table, kept exactly as NotarAI creates it (its CLI reads and writes the same file),
// and Grove's own `grove_stat_cache` table, the stat fast path: a file whose size, mtime and inode
// match a row recorded at least one second after its mtime (git's racy-timestamp rule) has the
// row's hash and is not read again. The database is created on demand (the directory gets a
// `.gitignore`), reopened when someone else deletes or replaces it, and recreated with a warning
// when it is corrupt or not NotarAI's schema; it is a cache, so losing it only costs time.
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
import { ToolError } from '../platform/errors.ts';
import type { StatRow } from './stat-fast-path.ts';

export type { StatRow } from './stat-fast-path.ts';
export { statRowValid } from './stat-fast-path.ts';

/** NotarAI's table, character for character. */
export const FILE_CACHE_DDL =
  'CREATE TABLE file_cache (path TEXT PRIMARY KEY, blake3_hash TEXT NOT NULL, updated_at INTEGER NOT NULL)';
/** Grove's stat fast path. */
export const STAT_CACHE_DDL =
  'CREATE TABLE grove_stat_cache (path TEXT PRIMARY KEY, size INTEGER NOT NULL, ' +
  'mtime_ms REAL NOT NULL, ino INTEGER NOT NULL, blake3_hash TEXT NOT NULL, recorded_ms INTEGER NOT NULL)';

export const CACHE_DIR = '.notarai/.cache';
const DB_NAME = 'notarai.db';
export const CACHE_DB = `${CACHE_DIR}/${DB_NAME}`;
/** The database and the files SQLite keeps beside it (first: the database). */
const DB_FILES = ['', '-journal', '-wal', '-shm'].map((suffix) => `${DB_NAME}${suffix}`);

/** A row of NotarAI's table. */
export interface ReconciledRow {
  hash: string;
  /** Unix seconds. */
  updatedAt: number;
}

interface Memo {
  dataVersion: number;
  reconciled: Map<string, ReconciledRow>;
  stats: Map<string, StatRow>;
}

const CORRUPT_CODES = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CANTOPEN']);

/**
 * How long one call waits, in all, for another process (NotarAI's CLI, a backup tool, an editor
 * extension) to release its lock on the cache. SQLite's own busy handler sleeps on the thread that
 * asked, which here is the event loop, so it is off (`busy_timeout = 0`): a locked database fails
 * at once and the call retries on a timer (5 ms, doubling to 200 ms) while other clients are served.
 */
export const LOCK_WAIT_MS = 10_000;

export interface HashCacheOptions {
  /** Overrides LOCK_WAIT_MS (tests). */
  lockWaitMs?: number;
}

export class HashCache {
  readonly root: string;
  readonly dbPath: string;
  #db: Database.Database | undefined;
  /** Inode of the file #db was opened on (to notice deletion or replacement by another tool). */
  #ino: number | undefined;
  #warnings: string[] = [];
  /** In-memory copy of both tables, valid for the open connection (see #memoized). */
  #memo: Memo | undefined;

  readonly #lockWaitMs: number;

  constructor(root: string, options: HashCacheOptions = {}) {
    this.root = root;
    this.dbPath = path.join(root, CACHE_DB);
    this.#lockWaitMs = options.lockWaitMs ?? LOCK_WAIT_MS;
  }

  /** Warnings gathered since the last call (a corrupt database recreated, ...). */
  takeWarnings(): string[] {
    const taken = this.#warnings;
    this.#warnings = [];
    return taken;
  }

  async exists(): Promise<boolean> {
    return this.#inspect()?.isFile() === true;
  }

  /**
   * The database file's lstat (undefined when missing), after proving that nothing in the cache
   * directory leads elsewhere: `.notarai/.cache` is walked without following symlinks, and a
   * symlink, directory or special file where SQLite keeps the database, its journal or its WAL is a
   * ToolError naming it (SQLite would follow it, and replay or overwrite whatever it points at).
   */
  #inspect(): Stats | undefined {
    const entries = lstatEntriesInsideRoot(this.root, CACHE_DIR, DB_FILES);
    if (!entries) return undefined;
    entries.forEach((stats, index) => {
      const kind = entryKind(stats);
      if (kind === 'missing' || kind === 'file') return;
      const what = kind === 'special' ? 'a special file (FIFO, socket or device)' : `a ${kind}`;
      throw new ToolError(
        `the hash cache's ${CACHE_DIR}/${DB_FILES[index]} is ${what}, which Grove never opens; ` +
          'delete it (the cache is rebuilt) and try again',
      );
    });
    return entries[0];
  }

  /**
   * NotarAI's rows (empty, without creating anything, when there is no database). The returned
   * map is shared: callers must not change it.
   */
  async readReconciled(): Promise<ReadonlyMap<string, ReconciledRow>> {
    return (await this.#memoized())?.reconciled ?? new Map();
  }

  /** Grove's stat rows (empty when there is no database). Shared: do not change it. */
  async readStats(): Promise<ReadonlyMap<string, StatRow>> {
    return (await this.#memoized())?.stats ?? new Map();
  }

  /**
   * Both tables, read once and kept in memory while nobody else writes: `PRAGMA data_version`
   * changes when another connection (NotarAI's CLI) commits; our own writes update the copy.
   */
  async #memoized(): Promise<Memo | undefined> {
    let memo: Memo | undefined;
    await this.#use(false, (db) => {
      const version = db.pragma('data_version', { simple: true }) as number;
      if (this.#memo?.dataVersion === version) {
        memo = this.#memo;
        return;
      }
      const reconciled = new Map<string, ReconciledRow>();
      const rows = db
        .prepare('SELECT path, blake3_hash, updated_at FROM file_cache')
        .raw(true)
        .all() as [string, string, number][];
      for (const [file, hash, updatedAt] of rows) reconciled.set(file, { hash, updatedAt });
      const stats = new Map<string, StatRow>();
      const statRows = db
        .prepare('SELECT path, size, mtime_ms, ino, blake3_hash, recorded_ms FROM grove_stat_cache')
        .raw(true)
        .all() as [string, number, number, number, string, number][];
      for (const [file, size, mtimeMs, ino, hash, recordedMs] of statRows) {
        stats.set(file, { path: file, size, mtimeMs, ino, hash, recordedMs });
      }
      memo = this.#memo = { dataVersion: version, reconciled, stats };
    });
    return memo;
  }

  /** Upserts NotarAI rows (and their stat rows) in one transaction; creates the database. */
  async writeReconciled(
    rows: readonly { path: string; hash: string }[],
    stats: readonly StatRow[],
    updatedAt: number,
  ): Promise<number> {
    let written = 0;
    await this.#use(true, (db) => {
      const upsert = db.prepare(
        'INSERT INTO file_cache (path, blake3_hash, updated_at) VALUES (?, ?, ?) ' +
          'ON CONFLICT(path) DO UPDATE SET blake3_hash = excluded.blake3_hash, updated_at = excluded.updated_at',
      );
      const upsertStat = statUpsert(db);
      // In key order, B-tree inserts stay sequential.
      db.transaction(() => {
        for (const row of sortedByPath(rows)) upsert.run(row.path, row.hash, updatedAt);
        for (const row of sortedByPath(stats)) upsertStat(row);
      })();
      written = rows.length;
      if (this.#memo) {
        for (const row of rows) this.#memo.reconciled.set(row.path, { hash: row.hash, updatedAt });
        for (const row of stats) this.#memo.stats.set(row.path, row);
      }
    });
    return written;
  }

  /** Records stat rows, only if the database already exists (a read never creates it). */
  async recordStats(stats: readonly StatRow[]): Promise<void> {
    if (stats.length === 0) return;
    await this.#use(false, (db) => {
      const upsertStat = statUpsert(db);
      db.transaction(() => {
        for (const row of sortedByPath(stats)) upsertStat(row);
      })();
      if (this.#memo) for (const row of stats) this.#memo.stats.set(row.path, row);
    });
  }

  /** Deletes the database file (and its journal files). True if it existed. */
  async clear(): Promise<boolean> {
    this.close();
    return this.#removeFiles();
  }

  close(): void {
    try {
      this.#db?.close();
    } catch {
      // already closed
    }
    this.#db = undefined;
    this.#ino = undefined;
    this.#memo = undefined;
  }

  /**
   * Runs `work` on an open database. `create` false: does nothing when there is no database.
   * While another process holds a lock, retries on a timer for up to the lock budget, then ends the
   * call with a ToolError saying so (a transaction that met the lock was rolled back whole).
   */
  async #use(createIfMissing: boolean, work: (db: Database.Database) => void): Promise<void> {
    const deadline = Date.now() + this.#lockWaitMs;
    for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
      try {
        await this.#useUnlocked(createIfMissing, work);
        return;
      } catch (error) {
        if (!isLocked(error)) throw error;
        if (Date.now() + delay > deadline) {
          throw new ToolError(
            `the hash cache ${CACHE_DB} is locked by another process (NotarAI's CLI, a backup ` +
              `tool or an editor extension?) and stayed locked for ${this.#lockWaitMs / 1000} s; ` +
              'try again',
          );
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /** One attempt of #use: a corrupt database is recreated (with a warning) and `work` retried once. */
  async #useUnlocked(
    createIfMissing: boolean,
    work: (db: Database.Database) => void,
  ): Promise<void> {
    let create = createIfMissing;
    for (let attempt = 0; attempt < 2; attempt++) {
      const db = await this.#open(create);
      if (!db) return;
      try {
        work(db);
        return;
      } catch (error) {
        if (!isCorruption(error) || attempt > 0) throw error;
        await this.#recreate(error);
        create = true;
      }
    }
  }

  /** Removes the database and its companions (symlinks themselves, never their targets). */
  #removeFiles(): boolean {
    const removed = DB_FILES.map((name) => removeFileInsideRoot(this.root, `${CACHE_DIR}/${name}`));
    return removed[0] === true;
  }

  async #open(create: boolean): Promise<Database.Database | undefined> {
    const info = this.#inspect();
    if (this.#db && info && info.ino === this.#ino) return this.#db;
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
    if (!this.#inspect()) await writeFileAtomicInsideRoot(this.root, CACHE_DB, '');
    const db = new Database(this.dbPath, { fileMustExist: true });
    try {
      // The file SQLite opened must be the one checked (SQLite resolves symlinks in the name: a
      // directory swapped for a link since the check shows up here as another path).
      const main = (db.pragma('database_list') as { name: string; file: string }[]).find(
        (entry) => entry.name === 'main',
      );
      if (main?.file !== this.dbPath) {
        throw new ToolError(
          `the hash cache ${CACHE_DB} changed while it was being opened; try again`,
        );
      }
      db.pragma('busy_timeout = 0'); // never sleep on the event loop: #use retries on a timer
      db.pragma('journal_mode = MEMORY');
      // This connection only (the file format stays NotarAI's): a big page cache for 200,000-row
      // batches, and fewer fsyncs; a cache damaged by a power cut is recreated anyway.
      db.pragma('cache_size = -65536');
      db.pragma('synchronous = NORMAL');
      ensureSchema(db);
    } catch (error) {
      db.close();
      throw error;
    }
    const info = this.#inspect();
    if (!info) {
      db.close();
      throw new ToolError(
        `the hash cache ${CACHE_DB} vanished while it was being opened; try again`,
      );
    }
    this.#db = db;
    this.#ino = info.ino;
    return db;
  }

  async #recreate(cause: unknown): Promise<void> {
    this.#warnings.push(
      `the hash cache ${CACHE_DB} was unreadable (${
        cause instanceof Error ? cause.message : String(cause)
      }) and has been recreated empty: previously reconciled files count as changed again`,
    );
    this.close();
    this.#removeFiles();
    await this.#prepareDirectory();
  }

  /** Creates the cache directory (never through a symlink) and its `.gitignore`. */
  async #prepareDirectory(): Promise<void> {
    ensureDirectoryInsideRoot(this.root, CACHE_DIR);
    const [ignore] = lstatEntriesInsideRoot(this.root, CACHE_DIR, ['.gitignore']) ?? [];
    if (!ignore) {
      await writeFileAtomicInsideRoot(
        this.root,
        `${CACHE_DIR}/.gitignore`,
        '# Created by Grove: the NotarAI hash cache is local state.\n*\n',
      );
    }
  }
}

function sortedByPath<T extends { path: string }>(rows: readonly T[]): T[] {
  return [...rows].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function statUpsert(db: Database.Database): (row: StatRow) => void {
  const statement = db.prepare(
    'INSERT INTO grove_stat_cache (path, size, mtime_ms, ino, blake3_hash, recorded_ms) ' +
      'VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET size = excluded.size, ' +
      'mtime_ms = excluded.mtime_ms, ino = excluded.ino, blake3_hash = excluded.blake3_hash, ' +
      'recorded_ms = excluded.recorded_ms',
  );
  return (row) => {
    statement.run(row.path, row.size, row.mtimeMs, row.ino, row.hash, row.recordedMs);
  };
}

/** Creates missing tables; a `file_cache` with other columns is treated as corruption. */
function ensureSchema(db: Database.Database): void {
  const existing = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as {
    name: string;
    sql: string;
  }[];
  const fileCache = existing.find((table) => table.name === 'file_cache');
  if (!fileCache) {
    db.exec(FILE_CACHE_DDL);
  } else {
    const columns = (db.pragma('table_info(file_cache)') as { name: string }[]).map(
      (column) => column.name,
    );
    if (columns.join(',') !== 'path,blake3_hash,updated_at') {
      const error = new Error(
        `file_cache has columns (${columns.join(', ')}), not NotarAI's (path, blake3_hash, updated_at)`,
      ) as Error & { code: string };
      error.code = 'SQLITE_CORRUPT';
      throw error;
    }
  }
  if (!existing.some((table) => table.name === 'grove_stat_cache')) db.exec(STAT_CACHE_DDL);
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
