import Database from 'better-sqlite3';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir } from '../testing/temp-repo.ts';
import { ACTIVITY_TEXT_CHARS } from '../../shared/model.ts';
import { AppDatabase, FIRST_WORKTREE_PORT } from './app-database.ts';

describe('AppDatabase', () => {
  it('gives each worktree a distinct port and token, and the same ones after reopening', async () => {
    const dataDir = await makeTempDir();
    const first = await AppDatabase.open(dataDir);
    const repo = first.upsertRepo('/r/main');
    const a = first.ensureWorktree(repo.id, '/r/main');
    const b = first.ensureWorktree(repo.id, '/r/feature');
    expect(a.port).toBe(FIRST_WORKTREE_PORT);
    expect(b.port).toBe(FIRST_WORKTREE_PORT + 1);
    expect(a.token).not.toBe(b.token);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    first.close();

    const second = await AppDatabase.open(dataDir);
    expect(second.upsertRepo('/r/main').id).toBe(repo.id);
    expect(second.ensureWorktree(repo.id, '/r/feature')).toEqual(b);
    expect(second.ensureWorktree(repo.id, '/r/main')).toEqual(a);
    second.close();
  });

  it('stores a moved port with the one it moved from, and hands out ports past both', async () => {
    const db = await AppDatabase.open(await makeTempDir());
    const repo = db.upsertRepo('/r/main');
    const a = db.ensureWorktree(repo.id, '/r/main');
    const b = db.ensureWorktree(repo.id, '/r/b');
    expect(a.movedFrom).toBeNull();
    expect(db.portsOfOtherWorktrees(a.id)).toEqual([b.port]);
    db.setWorktreePort(a.id, 50000, a.port);
    expect(db.getWorktreeByPath('/r/main')).toMatchObject({ port: 50000, movedFrom: a.port });
    // Both ports of a moved worktree are kept from the others: the one it has, the one it lost.
    expect(db.portsOfOtherWorktrees(b.id).sort()).toEqual([a.port, 50000].sort());
    expect(db.ensureWorktree(repo.id, '/r/c').port).toBe(50001);
    // A port the user chose: no move to remember.
    db.setWorktreePort(a.id, 40000);
    expect(db.getWorktreeByPath('/r/main')).toMatchObject({ port: 40000, movedFrom: null });
    expect(db.ensureWorktree(repo.id, '/r/d').port).toBe(50002);
    db.close();
  });

  it('hands a new port (not the lost one) to a worktree whose port another moved to', async () => {
    const db = await AppDatabase.open(await makeTempDir());
    const repo = db.upsertRepo('/r/main');
    const a = db.ensureWorktree(repo.id, '/r/main');
    const b = db.ensureWorktree(repo.id, '/r/b');
    // `a` lost its port to another program and ended up on `b`'s (b was added meanwhile).
    db.setWorktreePort(a.id, b.port, a.port);
    expect(db.getWorktreeByPath('/r/main')).toMatchObject({ port: b.port, movedFrom: a.port });
    expect(db.getWorktreeByPath('/r/b')).toMatchObject({ port: b.port + 1, movedFrom: b.port });
    db.close();
  });

  it('remembers a moved port across a reopen, in a database made before moves were kept', async () => {
    const dataDir = await makeTempDir();
    const made = await AppDatabase.open(dataDir);
    const repo = made.upsertRepo('/r/main');
    const a = made.ensureWorktree(repo.id, '/r/main');
    made.close();
    // As the previous version left it: no moved_from column, one schema version less.
    const raw = new Database(path.join(dataDir, AppDatabase.FILE_NAME));
    const version = raw.pragma('user_version', { simple: true }) as number;
    raw.exec('ALTER TABLE worktrees DROP COLUMN moved_from');
    raw.pragma(`user_version = ${version - 1}`);
    raw.close();

    const first = await AppDatabase.open(dataDir);
    expect(first.getWorktreeByPath('/r/main')).toMatchObject({ port: a.port, movedFrom: null });
    first.setWorktreePort(a.id, 50000, a.port);
    first.close();
    const second = await AppDatabase.open(dataDir);
    expect(second.getWorktreeByPath('/r/main')).toMatchObject({ port: 50000, movedFrom: a.port });
    second.close();
  });

  it("keeps each worktree's newest 1,000 tool calls, oldest first, and forgets them with it", async () => {
    const dataDir = await makeTempDir();
    const db = await AppDatabase.open(dataDir);
    const repo = db.upsertRepo('/r/main');
    const a = db.ensureWorktree(repo.id, '/r/main');
    const b = db.ensureWorktree(repo.id, '/r/b');
    const call = (n: number) => ({
      id: `1.x-${n}`,
      at: 1_700_000_000_000 + n,
      clientId: 's1',
      clientName: 'Claude Code',
      tool: 'read_file',
      argumentsSummary: `{"path":"f${n}.txt"}`,
      durationMs: 1.5,
      resultBytes: 10,
      ok: n % 2 === 0,
      error: n % 2 === 0 ? null : 'file not found',
    });
    for (let batch = 0; batch < 12; batch++) {
      db.appendActivity(
        a.id,
        Array.from({ length: 100 }, (_, i) => call(batch * 100 + i)),
        1000,
      );
    }
    db.appendActivity(b.id, [call(5000)], 1000);
    db.close();

    const reopened = await AppDatabase.open(dataDir);
    const kept = reopened.recentActivity(a.id, 1000).entries;
    expect(kept).toHaveLength(1000);
    expect(kept[0]).toEqual(call(200));
    expect(kept.at(-1)).toEqual(call(1199));
    expect(reopened.recentActivity(a.id, 2).entries.map((entry) => entry.id)).toEqual([
      '1.x-1198',
      '1.x-1199',
    ]);
    expect(reopened.recentActivity(b.id, 1000).entries).toEqual([call(5000)]);
    reopened.deleteWorktree(a.id);
    expect(reopened.recentActivity(a.id, 1000).entries).toEqual([]);
    reopened.close();
  });

  it('stores an echoed argument cut, and reads around rows too long to hold', async () => {
    const dataDir = await makeTempDir();
    const db = await AppDatabase.open(dataDir);
    const repo = db.upsertRepo('/r/main');
    const a = db.ensureWorktree(repo.id, '/r/main');
    const huge = 'y'.repeat(1_000_000);
    const entry = (n: number, error: string | null) => ({
      id: `1.x-${n}`,
      at: n,
      clientId: null,
      clientName: 'c',
      tool: 'export_context',
      argumentsSummary: `{"spec_path":"${huge}"}`,
      durationMs: 1,
      resultBytes: 10,
      ok: error === null,
      error,
    });
    db.appendActivity(a.id, [entry(1, `spec_path must be … ${huge}`)], 1000);
    const [stored] = db.recentActivity(a.id, 10).entries;
    expect(stored!.error!.length).toBe(ACTIVITY_TEXT_CHARS.error);
    expect(stored!.error!.endsWith('…')).toBe(true);
    expect(stored!.argumentsSummary.length).toBe(ACTIVITY_TEXT_CHARS.argumentsSummary);

    // Rows as a Grove before the cut wrote them (or planted): skipped, never parsed, and dropped.
    const insert = db.connection.prepare('INSERT INTO activity (worktree_id, entry) VALUES (?, ?)');
    insert.run(a.id, JSON.stringify(entry(2, huge)));
    insert.run(a.id, 'not json');
    db.appendActivity(a.id, [entry(3, null)], 1000);
    const read = db.recentActivity(a.id, 10);
    expect(read.entries.map((kept) => kept.id)).toEqual(['1.x-1', '1.x-3']);
    expect(read.skipped).toBe(2);
    expect(db.dropOversizedActivity(a.id)).toBe(1);
    db.close();
  });

  it('keeps settings', async () => {
    const dataDir = await makeTempDir();
    const db = await AppDatabase.open(dataDir);
    const token = db.getOrCreateSetting('ui-token', () => 'first');
    expect(db.getOrCreateSetting('ui-token', () => 'second')).toBe(token);
    db.close();
    const again = await AppDatabase.open(dataDir);
    expect(again.getSetting('ui-token')).toBe('first');
    again.close();
  });

  it('refuses a corrupt database file with a message naming it', async () => {
    const dataDir = await makeTempDir();
    await writeFile(
      path.join(dataDir, 'grove.db'),
      'this is not a database, just text '.repeat(200),
    );
    await expect(AppDatabase.open(dataDir)).rejects.toThrow(
      `cannot open the app database ${path.join(dataDir, 'grove.db')}: file is not a database`,
    );
  });

  it('refuses a database written by a newer Grove', async () => {
    const dataDir = await makeTempDir();
    const raw = new Database(path.join(dataDir, 'grove.db'));
    raw.pragma('user_version = 99');
    raw.close();
    await expect(AppDatabase.open(dataDir)).rejects.toThrow(
      /schema version 99 is newer than this Grove/,
    );
  });
});
