// What Grove reads of a cache database itself, before its SQLite connection reads anything
// (cache-database.ts). The file is untrusted: a repository can commit it.
//
// SQLite loads a database's whole schema (every row of `sqlite_schema`, each statement parsed) the
// first time a statement needs it, synchronously, on the thread that asked: a committed notarai.db
// whose schema held 100,000 triggers (an 11 MB file) held the worktree process's event loop 7.0 s
// before any check could refuse it. The expected schemas (a table and its primary key's index, per
// expected table) take a few hundred bytes of the first page, so Grove reads that page through the
// confined layer and decodes it following SQLite's file format
// (https://www.sqlite.org/fileformat2.html): the file is handed to SQLite only if page 1, the root
// of `sqlite_schema`, is a table leaf (the schema has no other page) none of whose cells spills to
// overflow pages. Loading such a schema costs SQLite a few microseconds whatever it says. What the
// page holds is returned, for the caller to check by name before SQLite loads it (a schema naming
// `sqlite_stat1` or `sqlite_stat4` would also have SQLite read every row of those tables).
//
// SQLite also reads what lies beside the database: a write-ahead log (refused by the caller) and a
// hot rollback journal, whose pages it writes back into the file on its first read. replayJournal
// does that on a worker thread, before the first page is read.
import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';

let sqlite: typeof Database | undefined;

/**
 * Opens a connection to `file` (better-sqlite3). The module is loaded by the first open: a
 * command-line run that finds no cache database, or one whose rows it does not need (the
 * classification it remembers still holds: classification-store.ts), never loads it (~7 ms of a
 * `grove check`, its CommonJS files and Node's CommonJS loader).
 */
export function openSqlite(file: string, options: Database.Options): Database.Database {
  sqlite ??= createRequire(import.meta.url)('better-sqlite3') as typeof Database;
  return new sqlite(file, options);
}

/** The largest page SQLite writes: reading this much of a file always covers its first page. */
export const MAX_PAGE_SIZE = 65_536;

/** One entry of `sqlite_schema`: a table, index, view or trigger, as the file declares it. */
export interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** The first page's schema, or why SQLite must not be given the file. */
export type FirstPage = { objects: SchemaObject[] } | { problem: string };

const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** B-tree page types (the first byte of a page's b-tree header). */
const TABLE_INTERIOR = 0x05;
const TABLE_LEAF = 0x0d;
/** Where page 1's b-tree header starts (after the 100-byte file header), and its size on a leaf. */
const BTREE_HEADER = 100;
const LEAF_HEADER_SIZE = 8;
/** Why a schema past the first page is refused, for messages. */
const EXPECTED_SCHEMA_TAKES = "NotarAI's and Grove's take a few hundred bytes of the first";

/**
 * Decodes the schema on a database's first page. `head`: the file's first MAX_PAGE_SIZE bytes (all
 * of it if shorter); empty for a file just created (SQLite writes its first page).
 */
export function readFirstPage(head: Buffer): FirstPage {
  if (head.length === 0) return { objects: [] };
  if (head.length < BTREE_HEADER || !head.subarray(0, MAGIC.length).equals(MAGIC)) {
    return { problem: 'it is not an SQLite database' };
  }
  const stored = head.readUInt16BE(16);
  const pageSize = stored === 1 ? 65_536 : stored;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) {
    return { problem: `its header gives no valid page size (${stored})` };
  }
  // Bytes 18 and 19: the versions needed to write and to read the file, 1 for a rollback journal,
  // 2 for a write-ahead log (WAL), which neither NotarAI (rusqlite's default) nor Grove uses.
  const [writeVersion, readVersion] = [head[18], head[19]];
  if (writeVersion === 2 || readVersion === 2) {
    return {
      problem:
        'it is in WAL mode, which neither NotarAI nor Grove uses (SQLite would take its schema ' +
        'from a write-ahead log beside it)',
    };
  }
  if (writeVersion !== 1 || readVersion !== 1) {
    return { problem: `its file format versions (${writeVersion}, ${readVersion}) are unknown` };
  }
  // 0: no text stored yet (SQLite then uses UTF-8); 2 and 3: UTF-16, which nothing here writes.
  const encoding = head.readUInt32BE(56);
  if (encoding !== 0 && encoding !== 1) {
    return { problem: 'its text is UTF-16, where NotarAI and Grove write UTF-8' };
  }
  if (head.length < pageSize) return { problem: 'it ends inside its first page' };
  const page = head.subarray(0, pageSize);
  // Byte 20: bytes reserved at the end of each page (by extensions); the rest is usable.
  const usable = pageSize - head[20]!;
  const malformed = { problem: 'its first page is malformed' };
  if (usable < 480) return malformed;

  const pageType = page[BTREE_HEADER];
  if (pageType === TABLE_INTERIOR) {
    // Page 1 points to other pages, each holding some of the schema (or pointing further).
    return {
      problem: `its schema spans more than one page (${EXPECTED_SCHEMA_TAKES})`,
    };
  }
  if (pageType !== TABLE_LEAF) return malformed;
  const cellCount = page.readUInt16BE(BTREE_HEADER + 3);

  const objects: SchemaObject[] = [];
  const pointers = BTREE_HEADER + LEAF_HEADER_SIZE;
  if (pointers + 2 * cellCount > usable) return malformed;
  for (let cell = 0; cell < cellCount; cell++) {
    const start = page.readUInt16BE(pointers + 2 * cell);
    // A table leaf cell: the payload's size, the rowid, then the payload (a record).
    const size = readVarint(page, start, usable);
    const rowid = size && readVarint(page, size.next, usable);
    if (!size || !rowid || start < pointers + 2 * cellCount) return malformed;
    // A payload larger than usable - 35 bytes keeps only its head here; the rest is on overflow
    // pages, another page SQLite would read.
    if (size.value > usable - 35) {
      return {
        problem:
          `its schema holds a ${size.value}-byte entry, which spills to overflow pages ` +
          `(${EXPECTED_SCHEMA_TAKES})`,
      };
    }
    if (rowid.next + size.value > usable) return malformed;
    const object = readSchemaRecord(page.subarray(rowid.next, rowid.next + size.value));
    if (!object) return malformed;
    objects.push(object);
  }
  return { objects };
}

/**
 * An SQLite varint at `at` (1-9 bytes, big-endian, 7 bits a byte but 8 in the ninth) and where the
 * next field starts; undefined if it runs past `end`. Values past 2^53 lose precision, which only
 * makes a size larger than anything accepted.
 */
function readVarint(
  bytes: Buffer,
  at: number,
  end: number,
): { value: number; next: number } | undefined {
  let value = 0;
  for (let index = 0; index < 9; index++) {
    if (at + index >= end) return undefined;
    const byte = bytes[at + index]!;
    if (index === 8) return { value: value * 256 + byte, next: at + 9 };
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return { value, next: at + index + 1 };
  }
  return undefined;
}

/**
 * A row of `sqlite_schema` (type, name, tbl_name, rootpage, sql) from its record: a header (its own
 * size, then one serial type per column) and the columns' bytes. Undefined if malformed, or if
 * type, name or tbl_name is not text.
 */
function readSchemaRecord(record: Buffer): SchemaObject | undefined {
  const headerSize = readVarint(record, 0, record.length);
  if (!headerSize || headerSize.value > record.length) return undefined;
  const columns: (string | null | undefined)[] = [];
  let typeAt = headerSize.next;
  let bodyAt = headerSize.value;
  while (typeAt < headerSize.value) {
    const serial = readVarint(record, typeAt, headerSize.value);
    if (!serial) return undefined;
    typeAt = serial.next;
    const length = serialLength(serial.value);
    if (bodyAt + length > record.length) return undefined;
    // Text: an odd serial type from 13 on. Anything else is kept as undefined (not text).
    const isText = serial.value >= 13 && serial.value % 2 === 1;
    columns.push(
      isText
        ? record.toString('utf8', bodyAt, bodyAt + length)
        : serial.value === 0
          ? null
          : undefined,
    );
    bodyAt += length;
  }
  const [type, name, tableName, , sql] = columns;
  if (typeof type !== 'string' || typeof name !== 'string' || typeof tableName !== 'string') {
    return undefined;
  }
  return { type, name, tbl_name: tableName, sql: typeof sql === 'string' ? sql : null };
}

/** How many bytes a column of this serial type takes in a record's body. */
function serialLength(serial: number): number {
  if (serial >= 12) return Math.floor((serial - 12) / 2);
  return [0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0][serial]!;
}

/** SQLite's error, as a value (a pool job's error keeps only its message). */
export interface SqliteFailure {
  code: string;
  message: string;
}

/** The code replayJournal answers with when SQLite opened another file than the one named. */
export const PATH_CHANGED = 'GROVE_PATH_CHANGED';

/**
 * Has SQLite settle the rollback journal beside a database: a hot journal (left by a write cut
 * short, or committed with the file) is played back into the file and deleted by a connection's
 * first read, here `PRAGMA schema_version`, which reads the file's header and never the schema; a
 * journal of a write in progress (another process holds its lock) is left alone. Playing a journal
 * back writes as many pages as it holds, so this runs on a worker thread (pool job
 * `sqlite-replay-journal`), and the caller reads the first page only afterwards: it is what SQLite
 * will load. Returns SQLite's error instead of throwing (a lock is waited for, a corrupt file
 * recreated).
 */
export function replayJournal(file: string): SqliteFailure | undefined {
  let db: Database.Database | undefined;
  try {
    // timeout 0: a lock held by another process is waited for by the caller, on a timer.
    db = openSqlite(file, { fileMustExist: true, timeout: 0 });
    // As on the main connection (cache-database.ts): SQLite resolves symlinks in the name, so a
    // directory swapped for a link since the caller's check shows up as another path. Nothing is
    // read before this.
    const main = (db.pragma('database_list') as { name: string; file: string }[]).find(
      (entry) => entry.name === 'main',
    );
    if (main?.file !== file) return { code: PATH_CHANGED, message: `opened ${String(main?.file)}` };
    db.pragma('schema_version');
    return undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return {
      code: typeof code === 'string' ? code : 'SQLITE_ERROR',
      message: error instanceof Error ? error.message : String(error),
    };
  } finally {
    db?.close();
  }
}
