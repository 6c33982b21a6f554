// Grove's own reading of a cache database's first page (sqlite-file.ts), against files SQLite
// wrote: what it decodes must be what SQLite itself lists in sqlite_schema, at every page size.
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../testing/temp-repo.ts';
import { FILE_CACHE_DDL, NOTARAI_CREATE_TABLE, STAT_CACHE_DDL } from './hash-cache.ts';
import { MAX_PAGE_SIZE, readFirstPage, type FirstPage } from './sqlite-file.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A database SQLite builds with `build`, and Grove's reading of its first page. */
async function firstPageOf(
  build: (db: Database.Database) => void,
): Promise<{ page: FirstPage; listed: unknown[] }> {
  const dir = await makeTempDir();
  dirs.push(dir);
  const file = path.join(dir, 'cache.db');
  const db = new Database(file);
  try {
    build(db);
    const listed = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema').all();
    db.close();
    return { page: readFirstPage(readFileSync(file).subarray(0, MAX_PAGE_SIZE)), listed };
  } finally {
    if (db.open) db.close();
  }
}

describe("a cache database's first page", () => {
  it.each([1024, 4096, 65_536])(
    'decodes the schema SQLite lists, at a page size of %i bytes',
    async (pageSize) => {
      const { page, listed } = await firstPageOf((db) => {
        db.pragma(`page_size = ${pageSize}`);
        db.exec(NOTARAI_CREATE_TABLE);
        db.exec(STAT_CACHE_DDL);
        db.prepare('INSERT INTO file_cache VALUES (?, ?, ?)').run('a', 'b'.repeat(64), 1);
      });
      expect(listed).toHaveLength(4);
      expect(page).toEqual({ objects: listed });
      expect(listed[0]).toMatchObject({ type: 'table', name: 'file_cache', sql: FILE_CACHE_DDL });
    },
  );

  it('takes an empty file, and a database without a schema yet, for an empty schema', async () => {
    expect(readFirstPage(Buffer.alloc(0))).toEqual({ objects: [] });
    const { page } = await firstPageOf((db) => db.pragma('user_version = 3'));
    expect(page).toEqual({ objects: [] });
  });

  it('refuses a schema past its first page: more entries than one page holds, or one that spills', async () => {
    const { page: many } = await firstPageOf((db) => {
      db.exec(NOTARAI_CREATE_TABLE);
      for (let n = 0; n < 100; n++) {
        db.exec(`CREATE TRIGGER t${n} AFTER INSERT ON file_cache BEGIN SELECT ${n}; END`);
      }
    });
    expect(many).toEqual({
      problem: expect.stringMatching(/^its schema spans more than one page/),
    });
    const { page: long } = await firstPageOf((db) => {
      db.pragma('page_size = 512');
      db.exec(`CREATE TABLE file_cache (path TEXT PRIMARY KEY /* ${'x'.repeat(500)} */)`);
    });
    expect(long).toEqual({
      problem: expect.stringMatching(
        /^its schema holds a \d+-byte entry, which spills to overflow pages/,
      ),
    });
  });

  it('refuses WAL mode, UTF-16 text, a file that is not SQLite, and one cut short', async () => {
    const { page: wal } = await firstPageOf((db) => {
      db.pragma('journal_mode = WAL');
      db.exec(NOTARAI_CREATE_TABLE);
    });
    expect(wal).toEqual({ problem: expect.stringMatching(/^it is in WAL mode/) });
    const { page: utf16 } = await firstPageOf((db) => {
      db.pragma("encoding = 'UTF-16le'");
      db.exec(NOTARAI_CREATE_TABLE);
    });
    expect(utf16).toEqual({ problem: expect.stringMatching(/^its text is UTF-16/) });
    expect(readFirstPage(Buffer.from('not a database '.repeat(100)))).toEqual({
      problem: 'it is not an SQLite database',
    });
    const dir = await makeTempDir();
    dirs.push(dir);
    const file = path.join(dir, 'cut.db');
    const db = new Database(file);
    db.exec(NOTARAI_CREATE_TABLE);
    db.close();
    expect(readFirstPage(readFileSync(file).subarray(0, 2000))).toEqual({
      problem: 'it ends inside its first page',
    });
  });

  it('calls a page whose cells point outside it malformed', async () => {
    const dir = await makeTempDir();
    dirs.push(dir);
    const file = path.join(dir, 'bad.db');
    const db = new Database(file);
    db.exec(NOTARAI_CREATE_TABLE);
    db.close();
    const head = readFileSync(file).subarray(0, MAX_PAGE_SIZE);
    head.writeUInt16BE(4095, 108); // the first cell pointer: the page's last byte
    expect(readFirstPage(head)).toEqual({ problem: 'its first page is malformed' });
  });
});
