// Undo of the last mark (the window's Undo, ReconcileEngine.undoMark) against real SQLite: the
// rows of NotarAI's file_cache after the undo are exactly those before the mark (rows it replaced
// come back with their hash and updated_at, rows it added are deleted), and an undo that would
// lose a later write is refused with nothing changed.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempRepo } from '../testing/temp-repo.ts';
import { CACHE_DB } from './floor/hash-cache.ts';
import { ReconcileEngine } from './reconcile-engine.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Every row of NotarAI's table, read by another connection (as NotarAI's CLI would). */
function rows(root: string): [string, string, number][] {
  const db = new Database(path.join(root, CACHE_DB), { readonly: true });
  try {
    return db
      .prepare('SELECT path, blake3_hash, updated_at FROM file_cache ORDER BY path')
      .raw(true)
      .all() as [string, string, number][];
  } finally {
    db.close();
  }
}

async function setup(): Promise<{ root: string; engine: ReconcileEngine; clock: { ms: number } }> {
  const repo = await makeTempRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  cleanups.push(() => repo.cleanup());
  const clock = { ms: Date.UTC(2025, 0, 1) };
  const engine = new ReconcileEngine({ root: repo.root, now: () => clock.ms });
  cleanups.push(() => engine.close());
  return { root: repo.root, engine, clock };
}

describe('undoMark', () => {
  it('brings back exactly the rows the mark replaced and deletes those it added', async () => {
    const { root, engine, clock } = await setup();
    await engine.markReconciled(['a.txt', 'b.txt']);
    await writeFile(path.join(root, 'b.txt'), 'b, edited\n');
    await writeFile(path.join(root, 'd.txt'), 'd\n');
    const before = rows(root);
    expect(before.map(([file]) => file)).toEqual(['a.txt', 'b.txt']);

    clock.ms += 86_400_000; // a day later: every row the mark writes differs from before
    const mark = await engine.markReconciled(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'gone.txt']);
    expect(mark.updated).toBe(4);
    expect(mark.mark_id).toMatch(/^mark-\d+-[0-9a-z]+$/);
    const marked = rows(root);
    expect(marked).toHaveLength(4);
    expect(marked).not.toEqual(before);

    expect(await engine.undoMark(mark.mark_id!)).toEqual({ restored: 2, deleted: 2 });
    expect(rows(root)).toEqual(before);
    // Once: the same undo again is refused.
    await expect(engine.undoMark(mark.mark_id!)).rejects.toThrow(/no mark to undo/);
    expect(rows(root)).toEqual(before);
  });

  it('undoes the mark that created the cache: every row it wrote goes, none is left', async () => {
    const { root, engine } = await setup();
    const mark = await engine.markReconciled(['a.txt', 'b.txt', 'c.txt']);
    expect(rows(root).map(([file]) => file)).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect(await engine.undoMark(mark.mark_id!)).toEqual({ restored: 0, deleted: 3 });
    expect(rows(root)).toEqual([]);
  });

  it('undoes only the last mark', async () => {
    const { root, engine } = await setup();
    const first = await engine.markReconciled(['a.txt']);
    const second = await engine.markReconciled(['b.txt']);
    const now = rows(root);
    await expect(engine.undoMark(first.mark_id!)).rejects.toThrow(/only the last mark/);
    expect(rows(root)).toEqual(now);
    await engine.undoMark(second.mark_id!);
    expect(rows(root).map(([file]) => file)).toEqual(['a.txt']);
  });

  it('refuses, changing nothing, when a row was written again since (NotarAI’s CLI)', async () => {
    const { root, engine } = await setup();
    await engine.markReconciled(['a.txt']);
    const mark = await engine.markReconciled(['a.txt', 'b.txt']);
    const other = new Database(path.join(root, CACHE_DB));
    other.prepare("UPDATE file_cache SET updated_at = 1 WHERE path = 'b.txt'").run();
    other.close();
    const now = rows(root);
    await expect(engine.undoMark(mark.mark_id!)).rejects.toThrow(
      /1 of the marked files were marked again or unmarked since \(b\.txt\)/,
    );
    expect(rows(root)).toEqual(now);
  });

  it('has nothing to undo after Clear cache', async () => {
    const { engine } = await setup();
    const mark = await engine.markReconciled(['a.txt']);
    await engine.clearCache();
    await expect(engine.undoMark(mark.mark_id!)).rejects.toThrow(/no mark to undo/);
  });
});
