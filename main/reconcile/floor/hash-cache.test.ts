import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UserError } from '../../platform/errors.ts';
import { lockSqliteFromAnotherProcess, worstLoopStall } from '../../testing/event-loop.ts';
import { SLICE_MS } from '../../platform/time-slices.ts';
import { makeTempDir } from '../../testing/temp-repo.ts';
import {
  CACHE_DB,
  FILE_CACHE_DDL,
  HashCache,
  NOTARAI_CREATE_TABLE,
  STAT_CACHE_DDL,
  STATS_DB,
} from './hash-cache.ts';
import { statRowValid } from './stat-fast-path.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempRoot(): Promise<string> {
  const dir = await makeTempDir();
  dirs.push(dir);
  return dir;
}

/** NotarAI rows for `count` paths, in order: a batch big enough to be written in slices. */
const bigBatch = (count: number) =>
  Array.from({ length: count }, (_, index) => ({
    path: `src/f${String(index).padStart(6, '0')}.ts`,
    hash: 'b'.repeat(64),
  }));

/**
 * Records one row ('first'), then starts a mark of 60,000 more (not awaited) and waits until its
 * write is under way: another connection can no longer take the write lock. (Sorting and queueing
 * come first and, on a loaded machine, take more than one turn of the event loop.)
 */
async function startBigMark(cache: HashCache) {
  await cache.writeReconciled([{ path: 'first', hash: 'a'.repeat(64) }], [], 1);
  let written = false;
  const writing = cache.writeReconciled(bigBatch(60_000), [], 2).then(() => {
    written = true;
  });
  const other = new Database(cache.dbPath, { timeout: 0 });
  try {
    for (let turn = 0; ; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (writeLockTaken(other)) break;
      if (written || turn > 10_000) throw new Error('the big write never held its lock');
    }
  } finally {
    other.close();
  }
  return { writing, written: () => written };
}

/** True if another connection holds the write lock of `other`'s database. */
function writeLockTaken(other: Database.Database): boolean {
  try {
    other.exec('BEGIN IMMEDIATE');
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return true;
    throw error;
  }
  other.exec('ROLLBACK');
  return false;
}

const row = (file: string, hash = 'a'.repeat(64)) => ({
  path: file,
  size: 3,
  mtimeMs: 1_000,
  ino: 7,
  hash,
  recordedMs: 5_000,
});

describe('hash cache', () => {
  it('reads nothing and creates nothing when there is no database', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    expect((await cache.readReconciled()).size).toBe(0);
    await cache.recordStats([row('a')]);
    expect(await cache.exists()).toBe(false);
    expect(await cache.clear()).toBe(false);
  });

  it('a read right after mark_reconciled sees the stat rows it wrote after answering', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    try {
      await cache.writeReconciled([{ path: 'a.txt', hash: 'b'.repeat(64) }], [row('a.txt')], 42);
      expect((await cache.readStats()).get('a.txt')).toMatchObject({ path: 'a.txt' });
    } finally {
      cache.close();
    }
  });

  it("creates exactly NotarAI's database (its statement, byte for byte) and keeps Grove's stat table in a file of its own", async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    expect(
      await cache.writeReconciled([{ path: 'a.txt', hash: 'b'.repeat(64) }], [row('a.txt')], 42),
    ).toBe(1);
    await cache.flush(); // the stat rows are written after the call answered
    cache.close();
    const db = new Database(path.join(root, CACHE_DB), { readonly: true });
    expect(db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all()).toEqual([
      { type: 'table', name: 'file_cache', sql: FILE_CACHE_DDL },
      // The primary key's index, as NotarAI's own database has it.
      { type: 'index', name: 'sqlite_autoindex_file_cache_1', sql: null },
    ]);
    // What NotarAI's open_cache_db stores (src/core/cache.rs): 12 spaces before each column.
    expect(FILE_CACHE_DDL).toBe(
      'CREATE TABLE file_cache (\n            path TEXT PRIMARY KEY,\n            blake3_hash TEXT NOT NULL,\n            updated_at INTEGER NOT NULL\n        )',
    );
    const notarai = new Database(':memory:');
    notarai.exec(NOTARAI_CREATE_TABLE);
    expect(notarai.prepare('SELECT sql FROM sqlite_master').pluck().get()).toBe(FILE_CACHE_DDL);
    notarai.close();
    expect(db.prepare('SELECT * FROM file_cache').all()).toEqual([
      { path: 'a.txt', blake3_hash: 'b'.repeat(64), updated_at: 42 },
    ]);
    db.close();
    const stats = new Database(path.join(root, STATS_DB), { readonly: true });
    expect(
      stats.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all(),
    ).toEqual(['grove_stat_cache']);
    expect(stats.prepare('SELECT path, ino FROM grove_stat_cache').all()).toEqual([
      { path: 'a.txt', ino: 7 },
    ]);
    stats.close();
    expect((await stat(path.join(root, '.notarai/.cache/.gitignore'))).isFile()).toBe(true);
  });

  it("drops the stat table an earlier Grove kept in NotarAI's database, keeping NotarAI's rows", async () => {
    const root = await tempRoot();
    await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
    const old = new Database(path.join(root, CACHE_DB));
    old.exec(NOTARAI_CREATE_TABLE);
    old.exec(STAT_CACHE_DDL);
    old.prepare('INSERT INTO file_cache VALUES (?, ?, ?)').run('a', 'c'.repeat(64), 1);
    old.close();
    const cache = new HashCache(root);
    expect((await cache.readReconciled()).get('a')?.hash).toBe('c'.repeat(64));
    cache.close();
    const db = new Database(path.join(root, CACHE_DB), { readonly: true });
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual(
      ['file_cache'],
    );
    db.close();
  });

  it("records stat rows only while NotarAI's database exists, and clear deletes both files", async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    await cache.recordStats([row('a')]);
    expect(existsSync(cache.statsPath)).toBe(false);
    await cache.create();
    expect(existsSync(cache.statsPath)).toBe(false);
    await cache.recordStats([row('a')]);
    expect((await cache.readStats()).get('a')?.ino).toBe(7);
    expect(await cache.clear()).toBe(true);
    expect(existsSync(cache.dbPath)).toBe(false);
    expect(existsSync(cache.statsPath)).toBe(false);
    expect((await cache.readStats()).size).toBe(0);
    cache.close();
  });

  it('upserts, sees writes by another connection, and reopens after the file is deleted', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    await cache.writeReconciled([{ path: 'a', hash: '1'.repeat(64) }], [row('a')], 1);
    await cache.writeReconciled([{ path: 'a', hash: '2'.repeat(64) }], [], 2);
    expect((await cache.readReconciled()).get('a')).toEqual({ hash: '2'.repeat(64), updatedAt: 2 });
    expect((await cache.readStats()).get('a')?.ino).toBe(7);
    // NotarAI's CLI writes through its own connection.
    const other = new Database(cache.dbPath);
    other.prepare('INSERT INTO file_cache VALUES (?, ?, ?)').run('b', '3'.repeat(64), 3);
    other.close();
    expect([...(await cache.readReconciled()).keys()].sort()).toEqual(['a', 'b']);
    // ...or deletes the database (notarai cache clear).
    await rm(cache.dbPath);
    expect((await cache.readReconciled()).size).toBe(0);
    expect(await cache.clear()).toBe(false);
    cache.close();
  });

  it('writes every row of a big batch, in any order, and updates the rows already there', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    const paths = Array.from({ length: 1234 }, (_, index) => `d${index % 7}/f${index}.ts`);
    const hashOf = (file: string, version: number) =>
      (file.length.toString(16) + version).padEnd(64, String(version));
    try {
      await cache.writeReconciled(
        paths.slice(0, 300).map((file) => ({ path: file, hash: hashOf(file, 1) })),
        paths.slice(0, 300).map((file) => ({ ...row(file), size: 1 })),
        1,
      );
      // Not sorted, and overlapping the first batch: every path ends with the second write.
      const second = [...paths].reverse();
      await cache.writeReconciled(
        second.map((file) => ({ path: file, hash: hashOf(file, 2) })),
        second.map((file) => ({ ...row(file), size: 2 })),
        2,
      );
      await cache.flush();
    } finally {
      cache.close();
    }
    // As NotarAI's CLI (and Grove's next process) reads them: its own connections.
    const notarai = new Database(path.join(root, CACHE_DB), { readonly: true });
    const stats = new Database(path.join(root, STATS_DB), { readonly: true });
    try {
      const rows = notarai
        .prepare('SELECT path, blake3_hash, updated_at FROM file_cache ORDER BY path')
        .raw(true)
        .all();
      expect(rows).toEqual([...paths].sort().map((file) => [file, hashOf(file, 2), 2]));
      const statRows = stats
        .prepare('SELECT path, size, blake3_hash FROM grove_stat_cache ORDER BY path')
        .raw(true)
        .all();
      expect(statRows).toEqual([...paths].sort().map((file) => [file, 2, 'a'.repeat(64)]));
    } finally {
      notarai.close();
      stats.close();
    }
  });

  it('writes a big batch in slices: other work runs meanwhile, and a read on the same connection sees all of it, never part', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    try {
      const { writing, written } = await startBigMark(cache);
      let turnsMeanwhile = 0;
      const otherWork = (async () => {
        while (!written()) {
          await new Promise((resolve) => setImmediate(resolve));
          turnsMeanwhile++;
        }
      })();
      expect(written()).toBe(false);
      expect((await cache.readReconciled()).size).toBe(60_001);
      await writing;
      await otherWork;
      expect(turnsMeanwhile).toBeGreaterThan(2);
    } finally {
      cache.close();
    }
  });

  it('a big batch cut short (the cache closed mid-write) leaves none of its rows', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    const { writing } = await startBigMark(cache);
    cache.close();
    await expect(writing).rejects.toThrow();
    const again = new HashCache(root);
    try {
      expect([...(await again.readReconciled()).keys()]).toEqual(['first']);
    } finally {
      again.close();
    }
  });

  it('a big batch whose call is cancelled mid-write leaves none of its rows, and no transaction open', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    // Each read of the clock is SLICE_MS later than the one before: every check finds the slice
    // used up, and the write yields after each statement.
    let offset = 0;
    const realNow = performance.now.bind(performance);
    const now = vi
      .spyOn(performance, 'now')
      .mockImplementation(() => realNow() + (offset += SLICE_MS + 1));
    try {
      await cache.writeReconciled([{ path: 'first', hash: 'a'.repeat(64) }], [], 1);
      const rows = bigBatch(4_000);
      const controller = new AbortController();
      let written = false;
      const writing = cache
        .writeReconciled(rows, [row('src/f000000.ts')], 2, controller.signal)
        .then(() => (written = true));
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve)); // some statements are written
      expect(written).toBe(false);
      controller.abort(new Error('the client cancelled'));
      await expect(writing).rejects.toThrow('the client cancelled');
      await cache.flush();
      expect([...(await cache.readReconciled()).keys()]).toEqual(['first']);
      expect(existsSync(cache.statsPath)).toBe(false);
      // The connection was left outside a transaction: the next write begins one of its own.
      await cache.writeReconciled([{ path: 'second', hash: 'c'.repeat(64) }], [], 3);
      // A call cancelled while it waited for its turn writes nothing either.
      await expect(
        cache.writeReconciled(
          [{ path: 'third', hash: 'd'.repeat(64) }],
          [],
          4,
          AbortSignal.abort(),
        ),
      ).rejects.toThrow();
    } finally {
      now.mockRestore();
      cache.close();
    }
    const other = new Database(path.join(root, CACHE_DB), { readonly: true });
    try {
      expect(other.prepare('SELECT path FROM file_cache ORDER BY path').pluck().all()).toEqual([
        'first',
        'second',
      ]);
    } finally {
      other.close();
    }
  });

  it('recreates a corrupt database with a warning instead of failing', async () => {
    const root = await tempRoot();
    await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
    await writeFile(path.join(root, CACHE_DB), 'this is not a database, just text '.repeat(200));
    const cache = new HashCache(root);
    expect((await cache.readReconciled()).size).toBe(0);
    const [warning] = cache.takeWarnings();
    expect(warning).toContain('recreated empty');
    expect(await cache.writeReconciled([{ path: 'a', hash: 'c'.repeat(64) }], [], 1)).toBe(1);
    expect((await cache.readReconciled()).size).toBe(1);
    expect(cache.takeWarnings()).toEqual([]);
    cache.close();
  });

  it('treats a file_cache with other columns as corrupt', async () => {
    const root = await tempRoot();
    await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
    const db = new Database(path.join(root, CACHE_DB));
    db.exec('CREATE TABLE file_cache (path TEXT, hash TEXT)');
    db.close();
    const cache = new HashCache(root);
    await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1);
    expect(cache.takeWarnings()[0]).toContain('not NotarAI');
    expect((await cache.readReconciled()).get('a')?.hash).toBe('d'.repeat(64));
    cache.close();
  });

  // A committed notarai.db is untrusted: NotarAI's table plus anything else (a trigger would run
  // inside Grove's writes, on the event loop). Each is refused as a schema mismatch: the file is
  // recreated with a warning naming what it held, and the rows marked are really stored.
  const NOTARAI_TABLE_AND: [string, string, RegExp][] = [
    [
      'an AFTER INSERT trigger (its side effect would land in another table)',
      'CREATE TABLE hits (n INTEGER); ' +
        'CREATE TRIGGER spy AFTER INSERT ON file_cache BEGIN INSERT INTO hits VALUES (1); END;',
      /holds table "hits", trigger "spy", which NotarAI never creates; Grove runs no trigger/,
    ],
    [
      'a BEFORE INSERT trigger that drops every row (RAISE(IGNORE))',
      'CREATE TRIGGER drop_rows BEFORE INSERT ON file_cache BEGIN SELECT RAISE(IGNORE); END;',
      /holds trigger "drop_rows", which NotarAI never creates; Grove runs no trigger/,
    ],
    [
      'a view',
      'CREATE VIEW cached AS SELECT path FROM file_cache;',
      /holds view "cached", which NotarAI never creates/,
    ],
    [
      'another index',
      'CREATE INDEX by_hash ON file_cache (blake3_hash);',
      /holds index "by_hash", which NotarAI never creates/,
    ],
    [
      "ANALYZE's tables (SQLite would read every row of them as it loads the schema)",
      'ANALYZE;',
      /holds table "sqlite_stat1", table "sqlite_stat4", which NotarAI never creates/,
    ],
  ];
  it.each(NOTARAI_TABLE_AND)(
    "recreates a committed notarai.db holding NotarAI's table and %s: the file is recreated without it, and the rows marked are stored",
    async (_what, extra, reason) => {
      const root = await tempRoot();
      await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
      const planted = new Database(path.join(root, CACHE_DB));
      planted.exec(NOTARAI_CREATE_TABLE);
      planted.exec(extra);
      planted.close();
      const cache = new HashCache(root);
      try {
        expect(
          await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [row('a')], 1),
        ).toBe(1);
        const warnings = cache.takeWarnings();
        expect(warnings).toEqual([expect.stringMatching(reason)]);
        expect(warnings[0]).toContain('recreated empty');
        expect((await cache.readReconciled()).get('a')?.hash).toBe('d'.repeat(64));
        await cache.flush();
      } finally {
        cache.close();
      }
      const db = new Database(path.join(root, CACHE_DB), { readonly: true });
      try {
        // Only NotarAI's table is left (no trigger, no side table holding a hit), with the row.
        expect(db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all()).toEqual(
          [
            { type: 'table', name: 'file_cache', sql: FILE_CACHE_DDL },
            { type: 'index', name: 'sqlite_autoindex_file_cache_1', sql: null },
          ],
        );
        expect(db.prepare('SELECT path, blake3_hash FROM file_cache').all()).toEqual([
          { path: 'a', blake3_hash: 'd'.repeat(64) },
        ]);
      } finally {
        db.close();
      }
    },
  );

  // NotarAI's columns, so table_info alone took them for NotarAI's table.
  const NOT_NOTARAI_TABLE: [string, string, RegExp][] = [
    [
      'a CHECK constraint',
      'CREATE TABLE file_cache (path TEXT PRIMARY KEY, blake3_hash TEXT NOT NULL ' +
        'CHECK (length(blake3_hash) = 0), updated_at INTEGER NOT NULL)',
      /file_cache is not the table NotarAI creates: its statement adds a constraint/,
    ],
    [
      'a generated column (hidden from table_info)',
      'CREATE TABLE file_cache (path TEXT PRIMARY KEY, blake3_hash TEXT NOT NULL, ' +
        'updated_at INTEGER NOT NULL, spin INTEGER GENERATED ALWAYS AS (1) STORED)',
      /file_cache has columns \(path, blake3_hash, updated_at, spin\), not NotarAI's/,
    ],
    [
      'WITHOUT ROWID',
      'CREATE TABLE file_cache (path TEXT PRIMARY KEY, blake3_hash TEXT NOT NULL, ' +
        'updated_at INTEGER NOT NULL) WITHOUT ROWID',
      /file_cache is not the table NotarAI creates/,
    ],
    [
      'a statement too long for one page (it spills to overflow pages, never read)',
      `CREATE TABLE file_cache (path TEXT PRIMARY KEY, blake3_hash TEXT NOT NULL, ` +
        `updated_at INTEGER NOT NULL /* ${'x'.repeat(5000)} */)`,
      /its schema holds a 5\d{3}-byte entry, which spills to overflow pages/,
    ],
  ];
  it.each(NOT_NOTARAI_TABLE)(
    "recreates a committed notarai.db whose file_cache has NotarAI's columns and %s",
    async (_what, statement, reason) => {
      const root = await tempRoot();
      await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
      const planted = new Database(path.join(root, CACHE_DB));
      planted.exec(statement);
      planted.close();
      const cache = new HashCache(root);
      try {
        expect(await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1)).toBe(1);
        expect(cache.takeWarnings()).toEqual([expect.stringMatching(reason)]);
        expect((await cache.readReconciled()).get('a')?.hash).toBe('d'.repeat(64));
      } finally {
        cache.close();
      }
      const db = new Database(path.join(root, CACHE_DB), { readonly: true });
      expect(
        db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table'").pluck().all(),
      ).toEqual([FILE_CACHE_DDL]);
      db.close();
    },
  );

  it("accepts and reads the database NotarAI's CLI creates, and the one an earlier Grove created (the same table on one line)", async () => {
    for (const statement of [
      NOTARAI_CREATE_TABLE,
      'CREATE TABLE file_cache (path TEXT PRIMARY KEY, blake3_hash TEXT NOT NULL, updated_at INTEGER NOT NULL)',
    ]) {
      const root = await tempRoot();
      await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
      const notarai = new Database(path.join(root, CACHE_DB));
      notarai.exec(statement);
      notarai.prepare('INSERT INTO file_cache VALUES (?, ?, ?)').run('kept', 'c'.repeat(64), 7);
      notarai.close();
      const cache = new HashCache(root);
      try {
        expect((await cache.readReconciled()).get('kept')).toEqual({
          hash: 'c'.repeat(64),
          updatedAt: 7,
        });
        await cache.writeReconciled([{ path: 'b', hash: 'd'.repeat(64) }], [row('b')], 8);
        expect((await cache.readReconciled()).size).toBe(2);
        await cache.flush();
        expect((await cache.readStats()).has('b')).toBe(true);
        expect(cache.takeWarnings()).toEqual([]);
      } finally {
        cache.close();
      }
    }
  });

  it('recreates a committed grove-stats.db holding a trigger: it never runs, and the stat rows are stored', async () => {
    const root = await tempRoot();
    await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
    const planted = new Database(path.join(root, STATS_DB));
    planted.exec(STAT_CACHE_DDL);
    planted.exec(
      'CREATE TRIGGER drop_rows BEFORE INSERT ON grove_stat_cache BEGIN SELECT RAISE(IGNORE); END',
    );
    planted.close();
    const cache = new HashCache(root);
    try {
      await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [row('a')], 1);
      expect((await cache.readStats()).get('a')).toMatchObject({ path: 'a', ino: 7 });
      expect(cache.takeWarnings()).toEqual([
        expect.stringMatching(
          /Grove's stat cache .*grove-stats\.db was unreadable \(it holds trigger "drop_rows", which Grove never creates; Grove runs no trigger/,
        ),
      ]);
    } finally {
      cache.close();
    }
    const stats = new Database(path.join(root, STATS_DB), { readonly: true });
    try {
      expect(stats.prepare('SELECT type, name FROM sqlite_master ORDER BY name').all()).toEqual([
        { type: 'table', name: 'grove_stat_cache' },
        { type: 'index', name: 'sqlite_autoindex_grove_stat_cache_1' },
      ]);
      expect(stats.prepare('SELECT path FROM grove_stat_cache').pluck().all()).toEqual(['a']);
    } finally {
      stats.close();
    }
  });

  it('checks the schema again when another connection changes it under an open one', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    try {
      await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1);
      // The same file (same inode), changed in place while Grove keeps it open.
      const other = new Database(cache.dbPath);
      other.exec(
        'CREATE TRIGGER drop_rows BEFORE INSERT ON file_cache BEGIN SELECT RAISE(IGNORE); END',
      );
      other.close();
      expect(await cache.writeReconciled([{ path: 'b', hash: 'e'.repeat(64) }], [], 2)).toBe(1);
      expect(cache.takeWarnings()).toEqual([expect.stringMatching(/holds trigger "drop_rows"/)]);
      expect((await cache.readReconciled()).get('b')?.hash).toBe('e'.repeat(64));
    } finally {
      cache.close();
    }
  });

  it('a mark answered while clear_cache waits does not bring the stat file back without the database', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    await cache.writeReconciled([{ path: 'a', hash: 'a'.repeat(64) }], [row('a')], 1);
    const clearing = cache.clear(); // waits for the first mark's stat rows
    // A second client's mark answers meanwhile; its stat rows are written on a later turn.
    await cache.writeReconciled([{ path: 'b', hash: 'b'.repeat(64) }], [row('b')], 1);
    await clearing;
    await cache.flush();
    expect(existsSync(cache.dbPath)).toBe(false);
    expect(existsSync(cache.statsPath)).toBe(false);
    cache.close();
  });

  it("another call's stat rows, recorded while clear_cache waits for a big mark's write, do not outlive the clear", async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    try {
      const { writing, written } = await startBigMark(cache);
      const clearing = cache.clear(); // waits for the write
      await new Promise((resolve) => setImmediate(resolve));
      // A get_spec_diff that classified before the clear records its stat rows now.
      await cache.recordStats([row('x')]);
      expect(written()).toBe(false); // (still writing: the clear has not happened yet)
      expect(await clearing).toBe(true);
      await writing;
      await cache.flush();
      expect(existsSync(cache.dbPath)).toBe(false);
      expect(existsSync(cache.statsPath)).toBe(false);
      // NotarAI's database created again: none of the rows from before the clear come back.
      await cache.create();
      expect((await cache.readStats()).size).toBe(0);
    } finally {
      cache.close();
    }
  });

  it('clear deletes the database', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    await cache.writeReconciled([{ path: 'a', hash: 'e'.repeat(64) }], [], 1);
    expect(await cache.clear()).toBe(true);
    expect(await cache.exists()).toBe(false);
    expect((await cache.readReconciled()).size).toBe(0);
  });
});

/**
 * NotarAI's table and `count` triggers on it, in a new database at `file` (11 MB for 100,000).
 * The triggers are written as rows of sqlite_schema (writable_schema), which SQLite loads exactly as
 * it loads triggers made by CREATE TRIGGER: that, one statement after another in one transaction,
 * took 7 minutes for 100,000 here (each costs more than the one before).
 */
function plantTriggers(file: string, count: number): void {
  const db = new Database(file);
  try {
    db.exec(NOTARAI_CREATE_TABLE);
    addTriggers(db, count);
  } finally {
    db.close();
  }
}

/** Adds `count` triggers on file_cache to `db`'s schema (see plantTriggers). */
function addTriggers(db: Database.Database, count: number): void {
  db.unsafeMode(true);
  db.pragma('writable_schema = ON');
  const insert = db.prepare(
    "INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql) VALUES ('trigger', ?, 'file_cache', 0, ?)",
  );
  db.transaction(() => {
    for (let n = 0; n < count; n++) {
      insert.run(`t${n}`, `CREATE TRIGGER t${n} AFTER INSERT ON file_cache BEGIN SELECT ${n}; END`);
    }
    // What CREATE TRIGGER changes too: other connections see that the schema changed.
    const version = db.pragma('schema_version', { simple: true }) as number;
    db.pragma(`schema_version = ${version + 1}`);
  })();
  db.pragma('writable_schema = OFF');
  db.unsafeMode(false);
}

/**
 * A hot rollback journal (https://www.sqlite.org/fileformat2.html, "The Rollback Journal") that
 * puts `image`, a whole database file, back in place of the database it lies beside: what a write
 * cut short leaves (the pages as they were before it), or what a repository can commit. SQLite
 * plays it back on its first read of the database.
 */
function hotJournal(image: Buffer): Buffer {
  const stored = image.readUInt16BE(16);
  const pageSize = stored === 1 ? 65_536 : stored;
  const pages = image.length / pageSize;
  const sector = 512;
  const nonce = 0x5eed;
  const header = Buffer.alloc(sector);
  Buffer.from('d9d505f920a163d7', 'hex').copy(header, 0); // the journal's magic
  header.writeUInt32BE(pages, 8); // records in the journal
  header.writeUInt32BE(nonce, 12); // the checksums' initial value
  header.writeUInt32BE(pages, 16); // the database's size, in pages, before the write
  header.writeUInt32BE(sector, 20);
  header.writeUInt32BE(pageSize, 24);
  const records: Buffer[] = [header];
  for (let number = 1; number <= pages; number++) {
    const page = image.subarray((number - 1) * pageSize, number * pageSize);
    // A record: the page's number, its content, and a checksum of every 200th byte of it.
    let checksum = nonce;
    for (let at = pageSize - 200; at > 0; at -= 200) checksum = (checksum + page[at]!) >>> 0;
    const numberBytes = Buffer.alloc(4);
    numberBytes.writeUInt32BE(number);
    const checksumBytes = Buffer.alloc(4);
    checksumBytes.writeUInt32BE(checksum);
    records.push(numberBytes, page, checksumBytes);
  }
  return Buffer.concat(records);
}

/** A notarai.db as NotarAI's CLI leaves it: its table, with a row for each of `paths`. */
function notaraiDatabase(file: string, paths: readonly string[]): void {
  const db = new Database(file);
  try {
    db.exec(NOTARAI_CREATE_TABLE);
    const insert = db.prepare('INSERT INTO file_cache VALUES (?, ?, ?)');
    for (const each of paths) insert.run(each, 'c'.repeat(64), 7);
  } finally {
    db.close();
  }
}

async function cacheDirectory(): Promise<string> {
  const root = await tempRoot();
  await mkdir(path.join(root, '.notarai/.cache'), { recursive: true });
  return root;
}

// SQLite loads a database's whole schema, synchronously, on the first statement that needs it: a
// committed notarai.db whose schema held 100,000 triggers held the event loop 7.0 s before any
// check could refuse it. Grove reads the first page itself and hands SQLite only a file whose whole
// schema is there, after settling what SQLite would read beside it.
describe('committed cache files are checked before SQLite loads their schema', () => {
  const spans =
    /its schema spans more than one page \(NotarAI's and Grove's take a few hundred bytes of the first\)/;

  it('recreates a notarai.db whose schema holds 100,000 triggers (11 MB) without loading it: the event loop is never held', async () => {
    const root = await cacheDirectory();
    plantTriggers(path.join(root, CACHE_DB), 100_000);
    expect((await stat(path.join(root, CACHE_DB))).size).toBeGreaterThan(10_000_000);
    const cache = new HashCache(root);
    try {
      const { stallMs, result } = await worstLoopStall(() =>
        cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1),
      );
      expect(result).toEqual({ status: 'fulfilled', value: 1 });
      expect(stallMs).toBeLessThan(300); // loading the schema held it 7.0 s
      const warnings = cache.takeWarnings();
      expect(warnings).toEqual([expect.stringMatching(spans)]);
      expect(warnings[0]).toMatch(/notarai\.db was unreadable \(.*\) and has been recreated empty/);
      expect((await cache.readReconciled()).get('a')?.hash).toBe('d'.repeat(64));
    } finally {
      cache.close();
    }
    expect((await stat(path.join(root, CACHE_DB))).size).toBeLessThan(100_000);
  });

  it("recreates a notarai.db that names NotarAI's table more times than NotarAI creates it", async () => {
    const root = await cacheDirectory();
    const db = new Database(path.join(root, CACHE_DB));
    db.exec(NOTARAI_CREATE_TABLE);
    db.unsafeMode(true);
    db.pragma('writable_schema = ON');
    const again = db.prepare(
      "INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql) VALUES ('table', 'file_cache', 'file_cache', 2, ?)",
    );
    for (let copy = 0; copy < 3; copy++) again.run(FILE_CACHE_DDL);
    db.close();
    const cache = new HashCache(root);
    try {
      expect(await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1)).toBe(1);
      expect(cache.takeWarnings()).toEqual([
        expect.stringMatching(/\(its schema holds 5 entries, where NotarAI creates at most 4\)/),
      ]);
    } finally {
      cache.close();
    }
  });

  it("still opens NotarAI's own database and uses its rows, and takes an empty file for a new cache", async () => {
    const root = await cacheDirectory();
    notaraiDatabase(path.join(root, CACHE_DB), ['kept', 'also kept']);
    const cache = new HashCache(root);
    try {
      expect([...(await cache.readReconciled()).keys()].sort()).toEqual(['also kept', 'kept']);
      expect(cache.takeWarnings()).toEqual([]);
    } finally {
      cache.close();
    }
    const empty = await cacheDirectory();
    await writeFile(path.join(empty, CACHE_DB), '');
    await writeFile(path.join(empty, STATS_DB), '');
    const fresh = new HashCache(empty);
    try {
      expect((await fresh.readReconciled()).size).toBe(0);
      await fresh.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [row('a')], 1);
      expect((await fresh.readStats()).has('a')).toBe(true);
      expect(fresh.takeWarnings()).toEqual([]);
    } finally {
      fresh.close();
    }
  });

  it('plays a hot journal back (a write cut short) before reading the first page: the rows it restores are used', async () => {
    const root = await cacheDirectory();
    const file = path.join(root, CACHE_DB);
    notaraiDatabase(file, ['kept']);
    const before = await readFile(file);
    // The write that was cut short: its row reached the file, the journal holds the pages before.
    const writer = new Database(file);
    writer.prepare('INSERT INTO file_cache VALUES (?, ?, ?)').run('torn', 'e'.repeat(64), 8);
    writer.close();
    await writeFile(`${file}-journal`, hotJournal(before));
    const cache = new HashCache(root);
    try {
      expect([...(await cache.readReconciled()).keys()]).toEqual(['kept']);
      expect(cache.takeWarnings()).toEqual([]);
      expect(existsSync(`${file}-journal`)).toBe(false);
    } finally {
      cache.close();
    }
  });

  it('plays a committed hot journal that puts a 100,000-trigger schema in place back on a worker, then recreates the file: the event loop is never held', async () => {
    const root = await cacheDirectory();
    const file = path.join(root, CACHE_DB);
    const planted = path.join(root, 'planted.db');
    plantTriggers(planted, 100_000);
    notaraiDatabase(file, ['kept']); // passes the check on its own
    await writeFile(`${file}-journal`, hotJournal(await readFile(planted)));
    const cache = new HashCache(root);
    try {
      const { stallMs, result } = await worstLoopStall(() =>
        cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1),
      );
      expect(result).toEqual({ status: 'fulfilled', value: 1 });
      expect(stallMs).toBeLessThan(300);
      // The schema the journal put back, found on the first page (SQLite's own playback on the
      // event loop, then its load of the schema, would have held it 7 s).
      expect(cache.takeWarnings()).toEqual([expect.stringMatching(spans)]);
      expect([...(await cache.readReconciled()).keys()]).toEqual(['a']);
      expect(existsSync(`${file}-journal`)).toBe(false);
    } finally {
      cache.close();
    }
  });

  it('never reads a write-ahead log beside a notarai.db: a committed one, whatever it holds, is deleted with the file', async () => {
    const root = await cacheDirectory();
    const file = path.join(root, CACHE_DB);
    notaraiDatabase(file, ['kept']);
    // A log holding NotarAI's own table with another row, taken from a database in WAL mode while
    // it is open (closing it moves the log into its file). SQLite, finding a log beside the file,
    // reads its pages instead of the file's.
    const source = path.join(root, 'wal-source.db');
    const writer = new Database(source);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0');
    writer.exec(NOTARAI_CREATE_TABLE);
    writer.prepare('INSERT INTO file_cache VALUES (?, ?, ?)').run('planted', 'f'.repeat(64), 9);
    await writeFile(`${file}-wal`, await readFile(`${source}-wal`));
    writer.close();
    const cache = new HashCache(root);
    try {
      expect((await cache.readReconciled()).size).toBe(0);
      expect(cache.takeWarnings()).toEqual([
        expect.stringMatching(
          /notarai\.db was unreadable \(a write-ahead log \(notarai\.db-wal\) lies beside it, which neither NotarAI nor Grove writes/,
        ),
      ]);
      expect(existsSync(`${file}-wal`)).toBe(false);
      await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1);
      expect([...(await cache.readReconciled()).keys()]).toEqual(['a']);
    } finally {
      cache.close();
    }
  });

  it('recreates a notarai.db in WAL mode (its header says its pages may be in a log)', async () => {
    const root = await cacheDirectory();
    const file = path.join(root, CACHE_DB);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(NOTARAI_CREATE_TABLE);
    db.close(); // the log is moved into the file and deleted; the header still says WAL
    expect(existsSync(`${file}-wal`)).toBe(false);
    const cache = new HashCache(root);
    try {
      expect(await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1)).toBe(1);
      expect(cache.takeWarnings()).toEqual([expect.stringMatching(/\(it is in WAL mode/)]);
      expect(existsSync(`${file}-wal`)).toBe(false);
    } finally {
      cache.close();
    }
  });

  it('checks the first page again when another connection puts 100,000 triggers under an open one', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    try {
      await cache.writeReconciled([{ path: 'a', hash: 'd'.repeat(64) }], [], 1);
      // The same file (same inode), changed in place while Grove keeps it open.
      const other = new Database(cache.dbPath);
      addTriggers(other, 100_000);
      other.close();
      const { stallMs, result } = await worstLoopStall(() =>
        cache.writeReconciled([{ path: 'b', hash: 'e'.repeat(64) }], [], 2),
      );
      expect(result).toEqual({ status: 'fulfilled', value: 1 });
      expect(stallMs).toBeLessThan(300);
      expect(cache.takeWarnings()).toEqual([expect.stringMatching(spans)]);
    } finally {
      cache.close();
    }
  });
});

describe('stat fast path', () => {
  const recorded = {
    size: 10,
    mtimeMs: 1_700_000_000_500,
    ino: 3,
    hash: 'h',
    recordedMs: 1_700_000_002_000,
  };
  it('holds when size, mtime and inode match and the file is older than the recording second', () => {
    expect(statRowValid(recorded, 10, 1_700_000_000_500, 3)).toBe(true);
    expect(statRowValid(recorded, 11, 1_700_000_000_500, 3)).toBe(false);
    expect(statRowValid(recorded, 10, 1_700_000_000_501, 3)).toBe(false);
    expect(statRowValid(recorded, 10, 1_700_000_000_500, 4)).toBe(false);
    expect(statRowValid(undefined, 10, 1_700_000_000_500, 3)).toBe(false);
  });

  it('does not hold for a racily clean row (modified in the second it was recorded)', () => {
    const racy = { ...recorded, mtimeMs: 1_700_000_002_100, recordedMs: 1_700_000_002_900 };
    expect(statRowValid(racy, 10, racy.mtimeMs, 3)).toBe(false);
  });
});

describe('hash cache locked by another process', () => {
  it('waits on a timer, never on the event loop, and succeeds once the lock is released', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root);
    await cache.writeReconciled([{ path: 'a', hash: 'a'.repeat(64) }], [], 1);
    cache.close();
    const lock = await lockSqliteFromAnotherProcess(path.join(root, CACHE_DB), 1_500);
    const started = performance.now();
    const { stallMs, result } = await worstLoopStall(() =>
      cache.writeReconciled([{ path: 'b', hash: 'b'.repeat(64) }], [], 2),
    );
    await lock.exited;
    expect(result.status).toBe('fulfilled');
    expect(performance.now() - started).toBeGreaterThan(1_000); // it did wait for the lock
    expect(stallMs).toBeLessThan(300); // ...without holding the loop (SQLite's busy handler would)
    expect([...(await cache.readReconciled()).keys()].sort()).toEqual(['a', 'b']);
  });

  it('ends the call with a clear error when the lock outlasts the budget', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root, { lockWaitMs: 400 });
    await cache.writeReconciled([{ path: 'a', hash: 'a'.repeat(64) }], [], 1);
    cache.close();
    const lock = await lockSqliteFromAnotherProcess(path.join(root, CACHE_DB), 2_500);
    const { stallMs, result } = await worstLoopStall(() => cache.readReconciled());
    expect(result.status).toBe('rejected');
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(UserError);
    expect(String((result as PromiseRejectedResult).reason)).toMatch(
      /notarai\.db is locked by another process .* try again/,
    );
    expect(stallMs).toBeLessThan(300);
    await lock.exited;
    // Released: the same cache answers again, nothing lost.
    expect([...(await cache.readReconciled()).keys()]).toEqual(['a']);
  });

  it('the budget holds for every call at once: calls queued behind one waiting for the lock are not given a budget each in turn', async () => {
    const root = await tempRoot();
    const cache = new HashCache(root, { lockWaitMs: 1_000 });
    await cache.writeReconciled([{ path: 'a', hash: 'a'.repeat(64) }], [], 1);
    cache.close();
    const lock = await lockSqliteFromAnotherProcess(path.join(root, CACHE_DB), 2_000);
    // The retries' clock is faked (each attempt fails at once, synchronously, while the other
    // process holds its lock): 1.5 s pass as soon as the timers run.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const settled: string[] = [];
    try {
      const calls = Array.from({ length: 3 }, (_, index) =>
        cache.readReconciled().then(
          () => settled.push(`${index} read`),
          (error: unknown) => settled.push(`${index} ${(error as UserError).code}`),
        ),
      );
      await vi.advanceTimersByTimeAsync(1_500);
      // Three clients asked at once: each is told within the budget (not the third after 3 s).
      expect(settled).toEqual(['0 busy', '1 busy', '2 busy']);
      await Promise.all(calls);
    } finally {
      vi.useRealTimers();
    }
    await lock.exited;
    expect([...(await cache.readReconciled()).keys()]).toEqual(['a']);
    cache.close();
  });
});
