// The hash cache of one worktree, in two files of `<root>/.notarai/.cache/` (cache-database.ts
// opens both through the confined layer):
//
// - `notarai.db`: NotarAI's database, exactly as NotarAI's CLI creates it (its `open_cache_db`,
//   src/core/cache.rs): the one `file_cache` table, with NotarAI's own CREATE statement, and
//   nothing of Grove's. NotarAI's CLI reads and writes the same file. It is created when NotarAI
//   creates it: by get_spec_diff (unless bypass_cache, or the spec governs nothing),
//   get_changed_artifacts, mark_reconciled and snapshot_state (`create`), never by
//   list_affected_specs, clear_cache or Grove's own views.
// - `grove-stats.db`: Grove's stat fast path (`grove_stat_cache`): a file whose size, mtime and
//   inode match a row recorded at least one second after its mtime (git's racy-timestamp rule)
//   has the row's hash and is not read again. Written only while `notarai.db` exists (without
//   NotarAI rows there is nothing to compare a hash with), deleted with it by clear_cache.
//
// A `grove_stat_cache` table that an earlier Grove left inside `notarai.db` is dropped. Either file
// may have been committed by anyone: one holding anything but its table (a trigger, a view, another
// table or index, the table with a constraint added) is recreated with a warning, and so is one
// whose schema does not fit in its first page, which Grove reads before SQLite loads anything
// (checkFirstPage, then checkSchema).
import type Database from 'better-sqlite3';
import path from 'node:path';
import { CACHE_DIR, CacheDatabase, inSlicedTransaction, schemaMismatch } from './cache-database.ts';
import { UserError } from '../../platform/errors.ts';
import { stageMark } from '../../platform/stage-timings.ts';
import { forEachInSlices, nextSlice, sliceDue } from '../../platform/time-slices.ts';
import type { SchemaObject } from './sqlite-file.ts';
import {
  NOTARAI_UPSERT,
  readRows,
  sortedByPath,
  STATS_UPSERT,
  upsertRows,
  type ReconciledRow,
} from './cache-rows.ts';
import type { StatRow } from './stat-fast-path.ts';

export type { StatRow } from './stat-fast-path.ts';
export { statRowValid } from './stat-fast-path.ts';
export { CACHE_DIR, LOCK_WAIT_MS } from './cache-database.ts';

/**
 * NotarAI's statement, byte for byte (src/core/cache.rs, `open_cache_db`): Grove runs the same
 * text, so SQLite stores the same schema.
 */
export const NOTARAI_CREATE_TABLE = `CREATE TABLE IF NOT EXISTS file_cache (
            path TEXT PRIMARY KEY,
            blake3_hash TEXT NOT NULL,
            updated_at INTEGER NOT NULL
        );`;
/** What SQLite keeps in `sqlite_master.sql` for it (IF NOT EXISTS and the `;` dropped). */
export const FILE_CACHE_DDL = `CREATE TABLE file_cache (
            path TEXT PRIMARY KEY,
            blake3_hash TEXT NOT NULL,
            updated_at INTEGER NOT NULL
        )`;
/** Grove's stat fast path, in Grove's own file. */
export const STAT_CACHE_DDL =
  'CREATE TABLE grove_stat_cache (path TEXT PRIMARY KEY, size INTEGER NOT NULL, ' +
  'mtime_ms REAL NOT NULL, ino INTEGER NOT NULL, blake3_hash TEXT NOT NULL, recorded_ms INTEGER NOT NULL)';

export const CACHE_DB = `${CACHE_DIR}/notarai.db`;
export const STATS_DB = `${CACHE_DIR}/grove-stats.db`;

/**
 * A WHERE clause matching the paths of a JSON array bound as the statement's one parameter. Used
 * with NOT INDEXED: the table is scanned as readReconciled scans it (a row a damaged index would
 * find in another place, or none at all, reads the same either way; the last of two rows of one
 * path wins in both).
 */
const PATH_IN_JSON = 'path IN (SELECT value FROM json_each(?))';

export type { ReconciledRow } from './cache-rows.ts';

/** Rows of one database kept in memory, valid for one connection while data_version holds. */
interface Memo<T> {
  db: Database.Database;
  dataVersion: number;
  rows: Map<string, T>;
}

export interface HashCacheOptions {
  /** Overrides LOCK_WAIT_MS (tests). */
  lockWaitMs?: number;
  /**
   * Read all rows in one statement call (`.all()`) instead of row by row between turns of the
   * event loop: ~2x cheaper, but it holds the thread for the whole read (tens of ms at 20,000
   * rows). Only for a process that serves no one else (the CLI: standaloneParts).
   */
  bulkReads?: boolean;
}

export class HashCache {
  readonly root: string;
  /** Absolute path of NotarAI's database. */
  readonly dbPath: string;
  /** Absolute path of Grove's stat database. */
  readonly statsPath: string;
  readonly #notarai: CacheDatabase;
  readonly #stats: CacheDatabase;
  #warnings: string[] = [];
  /** The stat rows of the last mark_reconciled, being written. */
  #statsWriting: Promise<void> = Promise.resolve();
  #reconciledMemo: Memo<ReconciledRow> | undefined;
  #statsMemo: Memo<StatRow> | undefined;
  /** Moves whenever readReconciled's rows may have changed (see reconciledVersion). */
  #reconciledVersion = 0;
  readonly #bulkReads: boolean;

  constructor(root: string, options: HashCacheOptions = {}) {
    this.root = root;
    this.#bulkReads = options.bulkReads ?? false;
    const warn = (message: string): void => {
      this.#warnings.push(message);
    };
    const lockWait = options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs };
    this.#notarai = new CacheDatabase({
      root,
      name: path.posix.basename(CACHE_DB),
      label: 'the hash cache',
      checkFirstPage: (objects) => checkFirstPage(objects, NOTARAI_TABLES, 'NotarAI'),
      prepare: prepareNotaraiDatabase,
      warn,
      whenLost: 'previously reconciled files count as changed again',
      ...lockWait,
    });
    this.#stats = new CacheDatabase({
      root,
      name: path.posix.basename(STATS_DB),
      label: "Grove's stat cache",
      checkFirstPage: (objects) => checkFirstPage(objects, STATS_TABLES, 'Grove'),
      prepare: prepareStatsDatabase,
      warn,
      whenLost: 'files are read and hashed again once',
      ...lockWait,
    });
    this.dbPath = this.#notarai.absolute;
    this.statsPath = this.#stats.absolute;
  }

  /** Warnings gathered since the last call (a corrupt database recreated, ...). */
  takeWarnings(): string[] {
    const taken = this.#warnings;
    this.#warnings = [];
    return taken;
  }

  /** True when NotarAI's database exists. */
  async exists(): Promise<boolean> {
    return this.#notarai.exists();
  }

  /** Creates NotarAI's database (and table) if missing, as NotarAI's `open_cache_db` does. */
  async create(): Promise<void> {
    await this.#notarai.use(true, () => undefined);
  }

  /**
   * Changes whenever the map readReconciled returns may hold other rows than before: a new read
   * (another connection wrote), our own write (which updates the shared map in place), a clear.
   * Answers computed from the rows stay valid while it holds (classification-memo.ts).
   */
  get reconciledVersion(): number {
    return this.#reconciledVersion;
  }

  /**
   * NotarAI's rows (empty, without creating anything, when there is no database), read once and
   * kept while nobody else writes: `PRAGMA data_version` changes when another connection
   * (NotarAI's CLI) commits; our own writes update the copy. The map is shared: do not change it.
   */
  async readReconciled(): Promise<ReadonlyMap<string, ReconciledRow>> {
    let rows: Map<string, ReconciledRow> | undefined;
    await this.#notarai.use(false, async (db) => {
      rows = (this.#reconciledMemo = await memoized(db, this.#reconciledMemo, async () => {
        this.#reconciledVersion++;
        const map = new Map<string, ReconciledRow>();
        const statement = db
          .prepare('SELECT path, blake3_hash, updated_at FROM file_cache')
          .raw(true);
        const add = ([file, hash, updatedAt]: [string, string, number]) =>
          map.set(file, { hash, updatedAt });
        if (this.#bulkReads) {
          for (const row of statement.all() as [string, string, number][]) add(row);
        } else {
          await forEachInSlices(
            statement.iterate() as IterableIterator<[string, string, number]>,
            add,
          );
        }
        return map;
      })).rows;
    });
    return rows ?? new Map();
  }

  /**
   * What identifies NotarAI's database as it is now (CacheDatabase.fingerprint; undefined: no
   * file, or one SQLite would still settle), with which stat file lies beside it (deleting
   * Grove's stat file is how a user makes every file be read again): what a remembered
   * classification was made against.
   */
  async reconciledFingerprint(): Promise<string | undefined> {
    const notarai = await this.#notarai.fingerprint();
    return notarai === undefined ? undefined : `${notarai} ${this.#stats.fileIdentity()}`;
  }

  /**
   * NotarAI's rows of `paths` alone, and Grove's stat rows of them (each empty when its database
   * is missing), each in one statement call, not kept: for a one-shot command that needs the rows
   * of a few files (the CLI's remembered classification, classification-store.ts).
   */
  async readRowsOf(paths: readonly string[]): Promise<{
    reconciled: ReadonlyMap<string, ReconciledRow>;
    stats: ReadonlyMap<string, StatRow>;
  }> {
    const reconciled = new Map<string, ReconciledRow>();
    const stats = new Map<string, StatRow>();
    if (paths.length === 0) return { reconciled, stats };
    const asked = JSON.stringify(paths);
    await this.#notarai.use(false, (db) => {
      const statement = db
        .prepare(
          `SELECT path, blake3_hash, updated_at FROM file_cache NOT INDEXED WHERE ${PATH_IN_JSON}`,
        )
        .raw(true);
      for (const [file, hash, updatedAt] of statement.all(asked) as [string, string, number][]) {
        reconciled.set(file, { hash, updatedAt });
      }
    });
    await this.#statsWriting;
    if (!this.#notarai.exists()) return { reconciled, stats };
    await this.#stats.use(false, (db) => {
      type Row = [string, number, number, number, string, number];
      const statement = db
        .prepare(
          'SELECT path, size, mtime_ms, ino, blake3_hash, recorded_ms FROM grove_stat_cache ' +
            `NOT INDEXED WHERE ${PATH_IN_JSON}`,
        )
        .raw(true);
      for (const [file, size, mtimeMs, ino, hash, recordedMs] of statement.all(asked) as Row[]) {
        stats.set(file, { path: file, size, mtimeMs, ino, hash, recordedMs });
      }
    });
    return { reconciled, stats };
  }

  /** Grove's stat rows (empty when either database is missing). Shared: do not change it. */
  async readStats(): Promise<ReadonlyMap<string, StatRow>> {
    await this.#statsWriting; // mark_reconciled's rows, written after it answered
    if (!this.#notarai.exists()) return new Map();
    let rows: Map<string, StatRow> | undefined;
    await this.#stats.use(false, async (db) => {
      rows = (this.#statsMemo = await memoized(db, this.#statsMemo, async () => {
        const map = new Map<string, StatRow>();
        type Row = [string, number, number, number, string, number];
        const statement = db
          .prepare(
            'SELECT path, size, mtime_ms, ino, blake3_hash, recorded_ms FROM grove_stat_cache',
          )
          .raw(true);
        const add = ([file, size, mtimeMs, ino, hash, recordedMs]: Row) =>
          map.set(file, { path: file, size, mtimeMs, ino, hash, recordedMs });
        if (this.#bulkReads) {
          for (const row of statement.all() as Row[]) add(row);
        } else {
          await forEachInSlices(statement.iterate() as IterableIterator<Row>, add);
        }
        return map;
      })).rows;
    });
    return rows ?? new Map();
  }

  /**
   * Upserts NotarAI rows in one transaction (creating the database, as NotarAI's mark_reconciled
   * does even for an empty list), then their stat rows in Grove's file. `signal`: the call's; once
   * it aborts, the transaction is rolled back whole at its next slice (a cancelled mark records
   * nothing).
   */
  async writeReconciled(
    rows: readonly { path: string; hash: string }[],
    stats: readonly StatRow[],
    updatedAt: number,
    signal?: AbortSignal,
    /** Given: gets the rows the write replaced, read in its transaction (null: none existed). */
    replaced?: Map<string, ReconciledRow | null>,
  ): Promise<number> {
    let written = 0;
    // In key order, B-tree inserts stay sequential (100,000 shuffled rows take twice as long).
    const ordered = await sortedByPath(rows, signal);
    stageMark('sorted'); // GROVE_STAGE_TIMINGS only (benchmarks)
    await this.#notarai.use(true, async (db) => {
      signal?.throwIfAborted(); // (cancelled while waiting for its turn)
      stageMark('db-ready');
      await inSlicedTransaction(db, async () => {
        if (replaced) await readRows(db, ordered, replaced, signal);
        await upsertRows(
          db,
          NOTARAI_UPSERT,
          ordered,
          (row, values, at) => {
            values[at] = row.path;
            values[at + 1] = row.hash;
            values[at + 2] = updatedAt;
          },
          signal,
        );
      });
      written = rows.length;
      stageMark('committed');
      const memo = this.#reconciledMemo;
      this.#reconciledVersion++;
      if (memo?.db === db) {
        await forEachInSlices(rows, (row) =>
          memo.rows.set(row.path, { hash: row.hash, updatedAt }),
        );
      }
      this.#reconciledVersion++; // again: a reader may have seen the map half updated
    });
    // Grove's stat rows only speed up later reads: they are written once the call has its answer
    // (the next read waits for them), so mark_reconciled costs NotarAI's write, not two. After
    // the answer's own turns of the event loop: on the next one (setImmediate) the write's first
    // slice ran before the answer was built or sent in 4 of 9 marks of 20,000 files (+10-24 ms).
    this.#statsWriting = this.#statsWriting
      .then(afterTheAnswer)
      // Not after a clear_cache that ran meanwhile: stat rows only live beside NotarAI's rows.
      .then(() => (this.#notarai.exists() ? this.#writeStats(stats) : undefined))
      .catch((error: unknown) => {
        this.#warnings.push(
          `Grove's stat cache could not record the files just marked (${
            error instanceof Error ? error.message : String(error)
          }); they are read again once`,
        );
      });
    return written;
  }

  /**
   * Undoes a write of `written` (all at `updatedAt`): each row becomes what `replaced` says it
   * was, a row that did not exist is deleted. Only NotarAI's rows change (the stat rows describe
   * the files' content, which an undo does not change). Refused whole, nothing written, when a
   * row no longer holds what the write put there (written again since, by a mark or NotarAI's
   * CLI) or the database is gone (cleared). Returns the rows restored and deleted.
   */
  async restoreReconciled(
    written: readonly { path: string; hash: string }[],
    updatedAt: number,
    replaced: ReadonlyMap<string, ReconciledRow | null>,
    signal?: AbortSignal,
  ): Promise<{ restored: number; deleted: number }> {
    if (!this.#notarai.exists()) {
      throw new UserError('the hash cache was cleared since the mark: there is nothing to undo');
    }
    const ordered = await sortedByPath(written, signal);
    const restore = ordered.flatMap((row) => {
      const before = replaced.get(row.path);
      return before ? [{ path: row.path, hash: before.hash, updatedAt: before.updatedAt }] : [];
    });
    const remove = ordered.filter((row) => !replaced.get(row.path));
    let ran = false;
    await this.#notarai.use(false, async (db) => {
      ran = true;
      await inSlicedTransaction(db, async () => {
        const now = new Map<string, ReconciledRow | null>();
        await readRows(db, ordered, now, signal);
        const moved = ordered.filter((row) => {
          const current = now.get(row.path);
          return !current || current.hash !== row.hash || current.updatedAt !== updatedAt;
        });
        if (moved.length > 0) {
          const names = moved.slice(0, 3).map((row) => row.path);
          throw new UserError(
            `${moved.length} of the marked files were marked again or unmarked since ` +
              `(${names.join(', ')}${moved.length > 3 ? ', ...' : ''}): undo would lose that; ` +
              'nothing was changed',
          );
        }
        await upsertRows(
          db,
          NOTARAI_UPSERT,
          restore,
          (row, values, at) => {
            values[at] = row.path;
            values[at + 1] = row.hash;
            values[at + 2] = row.updatedAt;
          },
          signal,
        );
        const statement = db.prepare('DELETE FROM file_cache WHERE path = ?');
        for (const row of remove) {
          statement.run(row.path);
          if (sliceDue(1)) await nextSlice(signal);
        }
      });
      // Our own writes do not move data_version for this connection: read again next time.
      this.#reconciledMemo = undefined;
      this.#reconciledVersion++;
    });
    if (!ran) {
      throw new UserError('the hash cache was cleared since the mark: there is nothing to undo');
    }
    return { restored: restore.length, deleted: remove.length };
  }

  /** Records stat rows, only while NotarAI's database exists (a read never creates it). */
  async recordStats(stats: readonly StatRow[]): Promise<void> {
    if (stats.length === 0 || !this.#notarai.exists()) return;
    await this.#writeStats(stats);
  }

  async #writeStats(stats: readonly StatRow[]): Promise<void> {
    if (stats.length === 0) return;
    const ordered = await sortedByPath(stats);
    await this.#stats.use(true, async (db) => {
      await inSlicedTransaction(db, () =>
        upsertRows(db, STATS_UPSERT, ordered, (row, values, at) => {
          values[at] = row.path;
          values[at + 1] = row.size;
          values[at + 2] = row.mtimeMs;
          values[at + 3] = row.ino;
          values[at + 4] = row.hash;
          values[at + 5] = row.recordedMs;
        }),
      );
      const memo = this.#statsMemo;
      if (memo?.db === db) await forEachInSlices(stats, (row) => memo.rows.set(row.path, row));
    });
  }

  /**
   * Deletes NotarAI's database (as NotarAI's clear_cache does) and Grove's stat file with it,
   * both with their journal files. True if NotarAI's database existed.
   */
  async clear(): Promise<boolean> {
    await this.#statsWriting; // a pending write must not bring the stat file back
    this.#reconciledMemo = undefined;
    this.#reconciledVersion++;
    this.#statsMemo = undefined;
    // Once the writes in progress have ended (they span several turns of the event loop).
    // NotarAI's file first: stat rows are only recorded while it exists, so none is queued after
    // the stat file's removal (deleting that first, a call recording stat rows while a big mark
    // still held NotarAI's file brought it back for good).
    const existed = await this.#notarai.removeInTurn();
    await this.#stats.removeInTurn();
    return existed;
  }

  /** Waits for writes deferred past a call's answer (Grove's stat rows). */
  async flush(): Promise<void> {
    await this.#statsWriting;
  }

  close(): void {
    this.#notarai.closeForGood();
    this.#stats.closeForGood();
    this.#reconciledMemo = undefined;
    this.#statsMemo = undefined;
  }
}

/**
 * The memo if it belongs to this connection and nobody wrote since, else a fresh read (100,000
 * rows: read in slices, inside `use`, which keeps other uses of the connection waiting).
 */
async function memoized<T>(
  db: Database.Database,
  memo: Memo<T> | undefined,
  read: () => Promise<Map<string, T>>,
): Promise<Memo<T>> {
  const dataVersion = db.pragma('data_version', { simple: true }) as number;
  if (memo?.db === db && memo.dataVersion === dataVersion) return memo;
  return { db, dataVersion, rows: await read() };
}

/** A table a cache file may hold: its statement, its columns and who creates it (for messages). */
interface ExpectedTable {
  statement: string;
  columns: readonly string[];
  creator: string;
}

const FILE_CACHE: ExpectedTable = {
  statement: FILE_CACHE_DDL,
  columns: ['path', 'blake3_hash', 'updated_at'],
  creator: 'NotarAI',
};
const STAT_CACHE: ExpectedTable = {
  statement: STAT_CACHE_DDL,
  columns: ['path', 'size', 'mtime_ms', 'ino', 'blake3_hash', 'recorded_ms'],
  creator: 'Grove',
};
/** What `notarai.db` may hold: NotarAI's table, and the stat table an earlier Grove kept there. */
const NOTARAI_TABLES: ReadonlyMap<string, ExpectedTable> = new Map([
  ['file_cache', FILE_CACHE],
  ['grove_stat_cache', STAT_CACHE],
]);
const STATS_TABLES: ReadonlyMap<string, ExpectedTable> = new Map([
  ['grove_stat_cache', STAT_CACHE],
]);

/**
 * A committed cache file is untrusted: its schema may hold a trigger (run inside every write Grove
 * makes, on the event loop: a recursive query per row stalls the worktree process, a
 * `RAISE(IGNORE)` drops rows Grove reports as stored), a view, another table or index, or the
 * expected table with a CHECK, a default, a generated column or a table option added. So a file is
 * used only if its schema holds the `expected` tables, each created by its statement (compared with
 * whitespace made uniform), and their primary keys' automatic indexes: nothing else. Anything else
 * is a schema mismatch (the file is recreated, with a warning naming what it held). `owner`: who
 * creates the file, for that warning. Returns the names of the expected tables present.
 */
function checkSchema(
  db: Database.Database,
  expected: ReadonlyMap<string, ExpectedTable>,
  owner: string,
): Set<string> {
  // A schema that fits in the first page (checkFirstPage, before SQLite loaded it).
  const objects = db
    .prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema')
    .all() as SchemaObject[];
  refuseUnexpected(objects, expected, owner);
  const present = new Set<string>();
  for (const object of objects) {
    const table = object.type === 'table' ? expected.get(object.name) : undefined;
    if (!table) continue; // a primary key's index (refuseUnexpected)
    if (object.sql === null || uniformSpaces(object.sql) !== uniformSpaces(table.statement)) {
      throw schemaMismatch(wrongStatement(db, object.name, table));
    }
    present.add(object.name);
  }
  return present;
}

/**
 * The schema on a cache file's first page, decoded by Grove before SQLite loads it
 * (cache-database.ts, sqlite-file.ts): the expected tables and their indexes, by name, as
 * checkSchema wants them (what SQLite would load is then just those statements; a schema naming
 * `sqlite_stat1` or `sqlite_stat4` would also have it read every row of those tables), and no more
 * entries than that (two per expected table: a file may repeat a name).
 */
function checkFirstPage(
  objects: readonly SchemaObject[],
  expected: ReadonlyMap<string, ExpectedTable>,
  owner: string,
): void {
  refuseUnexpected(objects, expected, owner);
  const most = 2 * expected.size;
  if (objects.length > most) {
    throw schemaMismatch(
      `its schema holds ${objects.length} entries, where ${owner} creates at most ${most}`,
    );
  }
}

/** A schema mismatch naming the objects that are neither an expected table nor its key's index. */
function refuseUnexpected(
  objects: readonly SchemaObject[],
  expected: ReadonlyMap<string, ExpectedTable>,
  owner: string,
): void {
  const unexpected = objects.filter(
    (object) =>
      !(object.type === 'table' && expected.has(object.name)) &&
      // the primary key's own index, which SQLite creates with the table
      !(
        object.type === 'index' &&
        object.sql === null &&
        expected.has(object.tbl_name) &&
        object.name === `sqlite_autoindex_${object.tbl_name}_1`
      ),
  );
  if (unexpected.length > 0) {
    const more = unexpected.length > 3 ? ` and ${unexpected.length - 3} more` : '';
    const triggers = unexpected.some((object) => object.type === 'trigger');
    throw schemaMismatch(
      `it holds ${unexpected.slice(0, 3).map(describeObject).join(', ')}${more}, which ` +
        `${owner} never creates${triggers ? '; Grove runs no trigger from a cache file' : ''}`,
    );
  }
}

/** Why a table's statement is not the expected one: other columns, or something added. */
function wrongStatement(db: Database.Database, name: string, table: ExpectedTable): string {
  // table_xinfo: generated and hidden columns too (table_info leaves them out).
  const columns = (db.pragma(`table_xinfo(${name})`) as { name: string }[]).map(
    (column) => column.name,
  );
  if (columns.join(',') !== table.columns.join(',')) {
    return (
      `${name} has columns (${columns.join(', ')}), not ${table.creator}'s ` +
      `(${table.columns.join(', ')})`
    );
  }
  return (
    `${name} is not the table ${table.creator} creates: its statement adds a constraint, a ` +
    'default, a collation or a table option'
  );
}

/**
 * The statement with each run of SQL whitespace made one space, and none beside `(`, `)` or `,`
 * (an earlier Grove created NotarAI's table on one line). No token changes: the statements compared
 * with hold no quote or comment, and only ASCII whitespace separates SQL tokens.
 */
function uniformSpaces(sql: string): string {
  return sql
    .replace(/[ \t\n\f\r]+/g, ' ')
    .replace(/ ?([(),]) ?/g, '$1')
    .trim();
}

/** `trigger "spin"`: the name (it comes from the file) quoted, escaped and cut short. */
function describeObject(object: SchemaObject): string {
  const name = object.name.length > 60 ? `${object.name.slice(0, 60)}...` : object.name;
  const what = ['table', 'index', 'view', 'trigger'].includes(object.type) ? object.type : 'object';
  return `${what} ${JSON.stringify(name)}`;
}

/**
 * NotarAI's schema: its own CREATE statement when the table is missing; a file holding anything
 * but NotarAI's table (checkSchema) is treated as corruption (recreated). Grove's stat table from
 * earlier versions goes.
 */
function prepareNotaraiDatabase(db: Database.Database): void {
  const tables = checkSchema(db, NOTARAI_TABLES, 'NotarAI');
  if (!tables.has('file_cache')) db.exec(NOTARAI_CREATE_TABLE);
  if (tables.has('grove_stat_cache')) db.exec('DROP TABLE grove_stat_cache');
}

/** Grove's stat table, alone (checkSchema); created when missing. */
function prepareStatsDatabase(db: Database.Database): void {
  const tables = checkSchema(db, STATS_TABLES, 'Grove');
  if (!tables.has('grove_stat_cache')) db.exec(STAT_CACHE_DDL);
}

/**
 * Resolves on a later turn of the event loop than the answer of the call that just wrote, so that
 * work started then does not delay it: after a timer (the answer's own steps, which go on at
 * setImmediate, run first) and one more turn.
 */
function afterTheAnswer(): Promise<void> {
  return new Promise((resolve) => setTimeout(() => setImmediate(resolve), 0));
}
