// The rows of the cache files, written and read in bulk: upserts of many rows per statement in
// slices of the event loop (NotarAI's table and Grove's stat table), reads of given paths' rows
// (what a mark replaces, for its Undo), and the key order SQLite stores them in. Used by
// hash-cache.ts inside its transactions.
import type Database from 'better-sqlite3';
import { compareUtf8 } from '../../platform/path-order.ts';
import { nextSlice, sliceDue, sortInSlices } from '../../platform/time-slices.ts';

/** A row of NotarAI's table. */
export interface ReconciledRow {
  hash: string;
  /** Unix seconds. */
  updatedAt: number;
}

/** An upsert: the INSERT's head, its columns, and what a conflicting row updates. */
export interface Upsert {
  head: string;
  columns: number;
  conflict: string;
}

export const NOTARAI_UPSERT: Upsert = {
  head: 'INSERT INTO file_cache (path, blake3_hash, updated_at) VALUES ',
  columns: 3,
  conflict:
    ' ON CONFLICT(path) DO UPDATE SET blake3_hash = excluded.blake3_hash, ' +
    'updated_at = excluded.updated_at',
};

export const STATS_UPSERT: Upsert = {
  head: 'INSERT INTO grove_stat_cache (path, size, mtime_ms, ino, blake3_hash, recorded_ms) VALUES ',
  columns: 6,
  conflict:
    ' ON CONFLICT(path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, ' +
    'ino = excluded.ino, blake3_hash = excluded.blake3_hash, recorded_ms = excluded.recorded_ms',
};

/** Rows per INSERT statement: one statement per row spends half its time crossing into SQLite. */
const ROWS_PER_STATEMENT = 200;

/**
 * Upserts `rows` in order, ROWS_PER_STATEMENT per statement (the same rows, written in the same
 * order, as one statement each: 20,000 rows in ~17 ms instead of ~35), in slices of the event
 * loop (100,000 rows take ~100 ms). Run inside inSlicedTransaction.
 */
export async function upsertRows<T>(
  db: Database.Database,
  upsert: Upsert,
  rows: readonly T[],
  fill: (row: T, values: unknown[], at: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  const placeholders = `(${new Array<string>(upsert.columns).fill('?').join(', ')})`;
  const statement = (count: number) =>
    db.prepare(
      `${upsert.head}${new Array<string>(count).fill(placeholders).join(', ')}${upsert.conflict}`,
    );
  const full = rows.length >= ROWS_PER_STATEMENT ? statement(ROWS_PER_STATEMENT) : undefined;
  const values = new Array<unknown>(ROWS_PER_STATEMENT * upsert.columns);
  let start = 0;
  for (; full && start + ROWS_PER_STATEMENT <= rows.length; start += ROWS_PER_STATEMENT) {
    for (let offset = 0; offset < ROWS_PER_STATEMENT; offset++) {
      fill(rows[start + offset] as T, values, offset * upsert.columns);
    }
    full.run(values);
    if (sliceDue(ROWS_PER_STATEMENT)) await nextSlice(signal);
  }
  const rest = rows.length - start;
  if (rest === 0) return;
  const tail: unknown[] = new Array<unknown>(rest * upsert.columns);
  for (let offset = 0; offset < rest; offset++) {
    fill(rows[start + offset] as T, tail, offset * upsert.columns);
  }
  statement(rest).run(tail);
}

/** Rows per SELECT of readRows (SQLite allows 32,766 parameters). */
const PATHS_PER_SELECT = 500;

/** Puts into `into` the row of each of `rows`' paths (null when there is none), in slices. */
export async function readRows(
  db: Database.Database,
  rows: readonly { path: string }[],
  into: Map<string, ReconciledRow | null>,
  signal?: AbortSignal,
): Promise<void> {
  // A table with no row at all (the database a first mark creates): none to look for.
  const empty = db.prepare('SELECT 1 FROM file_cache LIMIT 1').pluck().get() === undefined;
  for (let start = 0; start < rows.length; start += PATHS_PER_SELECT) {
    const paths = rows.slice(start, start + PATHS_PER_SELECT).map((row) => row.path);
    for (const file of paths) into.set(file, null);
    if (empty) {
      if (sliceDue(PATHS_PER_SELECT)) await nextSlice(signal);
      continue;
    }
    const found = db
      .prepare(
        `SELECT path, blake3_hash, updated_at FROM file_cache WHERE path IN (${paths
          .map(() => '?')
          .join(', ')})`,
      )
      .raw(true)
      .all(paths) as [string, string, number][];
    for (const [file, hash, updatedAt] of found) into.set(file, { hash, updatedAt });
    if (sliceDue(PATHS_PER_SELECT)) await nextSlice(signal);
  }
}

/** `rows` in SQLite's BINARY order (UTF-8 bytes), sorted in slices unless they are already. */
export function sortedByPath<T extends { path: string }>(
  rows: readonly T[],
  signal?: AbortSignal,
): Promise<readonly T[]> {
  return sortInSlices(rows, (a, b) => compareUtf8(a.path, b.path), signal);
}
