// The app database (SQLite, better-sqlite3) in the data directory: the repos the user opened and,
// for each worktree, its port, token and recent tool calls (the Activity tab, kept across
// restarts). Ports are stable: once a worktree has a port it keeps it
// across restarts, unless another program takes it (then the new port is stored, with the one it
// moved from, which the user can take back once it is free).
// Schema changes are numbered migrations applied in a transaction (PRAGMA user_version).
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  ActivityEntrySchema,
  boundActivityEntry,
  MAX_STORED_ACTIVITY_CHARS,
  type ActivityEntry,
} from '../../shared/model.ts';
import { secureDataDirectory, securePrivateFiles } from './data-directory.ts';

export interface RepoRow {
  id: number;
  path: string;
}

export interface WorktreeRow {
  id: number;
  repoId: number;
  path: string;
  port: number;
  token: string;
  autostart: boolean;
  requireToken: boolean;
  /** Offer the opt-in just task tools (list_just_tasks, run_just_task); off by default. */
  justTasks: boolean;
  /**
   * The port this worktree had before another program took it and it moved to `port`; null when
   * it never moved (or the user settled the move: took the port back, kept the new one, chose
   * another).
   */
  movedFrom: number | null;
}

/** First port handed to a new worktree; later ones take the next unassigned port. */
export const FIRST_WORKTREE_PORT = 47110;

const MIGRATIONS: string[] = [
  `CREATE TABLE repos (
     id INTEGER PRIMARY KEY,
     path TEXT NOT NULL UNIQUE,
     added_at INTEGER NOT NULL
   );
   CREATE TABLE worktrees (
     id INTEGER PRIMARY KEY,
     repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
     path TEXT NOT NULL UNIQUE,
     port INTEGER NOT NULL UNIQUE,
     token TEXT NOT NULL,
     autostart INTEGER NOT NULL DEFAULT 1
   );`,
  `CREATE TABLE settings (
     key TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );`,
  `ALTER TABLE worktrees ADD COLUMN require_token INTEGER NOT NULL DEFAULT 1;`,
  // The chat panel's conversations (main/chat/conversation-store.ts); parts are JSON.
  `CREATE TABLE chat_conversations (
     id INTEGER PRIMARY KEY,
     worktree_id INTEGER NOT NULL REFERENCES worktrees(id) ON DELETE CASCADE,
     title TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX chat_conversations_by_worktree ON chat_conversations(worktree_id, updated_at);
   CREATE TABLE chat_messages (
     id INTEGER PRIMARY KEY,
     conversation_id INTEGER NOT NULL REFERENCES chat_conversations(id) ON DELETE CASCADE,
     role TEXT NOT NULL,
     status TEXT NOT NULL,
     parts TEXT NOT NULL,
     error TEXT,
     created_at INTEGER NOT NULL
   );
   CREATE INDEX chat_messages_by_conversation ON chat_messages(conversation_id, id);`,
  // run_just_task and list_just_tasks, per worktree: off unless the user turns them on.
  `ALTER TABLE worktrees ADD COLUMN just_tasks INTEGER NOT NULL DEFAULT 0;`,
  // Each worktree's recent tool calls (ActivityEntry as JSON), oldest first by id; bounded by
  // appendActivity.
  `CREATE TABLE activity (
     id INTEGER PRIMARY KEY,
     worktree_id INTEGER NOT NULL REFERENCES worktrees(id) ON DELETE CASCADE,
     entry TEXT NOT NULL
   );
   CREATE INDEX activity_by_worktree ON activity(worktree_id, id);`,
  // The port a worktree had before it moved (WorktreeRow.movedFrom).
  `ALTER TABLE worktrees ADD COLUMN moved_from INTEGER;`,
];

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export class AppDatabase {
  /** The database's file in the data directory. */
  static readonly FILE_NAME = 'grove.db';
  private readonly db: Database.Database;

  private constructor(db: Database.Database) {
    this.db = db;
  }

  /**
   * Opens (creating if needed) `<dataDir>/grove.db`; throws a clear error if it is unusable. The
   * data directory is made private first (0700, its token and key files 0600, symlinks refused:
   * data-directory.ts), and the database and its WAL companions are 0600 once SQLite created them.
   */
  static async open(dataDir: string): Promise<AppDatabase> {
    await secureDataDirectory(dataDir);
    const file = path.join(dataDir, AppDatabase.FILE_NAME);
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { timeout: 2000 });
      db.pragma('journal_mode = WAL');
      db.pragma('foreign_keys = ON');
      const appDb = new AppDatabase(db);
      appDb.migrate();
      // SQLite created the file (and -wal, -shm) with the umask's mode; later ones copy grove.db's.
      await securePrivateFiles(dataDir);
      return appDb;
    } catch (error) {
      db?.close();
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`cannot open the app database ${file}: ${reason}`, { cause: error });
    }
  }

  /**
   * Opens `<dataDir>/grove.db` read-only, for a process that only looks (`grove bridge` finding
   * the running host's port and token for a worktree): no migration, no write, no mode change.
   * Undefined when there is no database yet (Grove never opened a repository with that directory).
   */
  static openReadOnly(dataDir: string): AppDatabase | undefined {
    const file = path.join(dataDir, AppDatabase.FILE_NAME);
    if (!existsSync(file)) return undefined;
    try {
      return new AppDatabase(
        new Database(file, { readonly: true, fileMustExist: true, timeout: 1000 }),
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`cannot read the app database ${file}: ${reason}`, { cause: error });
    }
  }

  private migrate(): void {
    const current = this.db.pragma('user_version', { simple: true }) as number;
    if (current > MIGRATIONS.length) {
      throw new Error(
        `database schema version ${current} is newer than this Grove (${MIGRATIONS.length})`,
      );
    }
    this.db.transaction(() => {
      for (let version = current; version < MIGRATIONS.length; version++) {
        this.db.exec(MIGRATIONS[version]!);
      }
      this.db.pragma(`user_version = ${MIGRATIONS.length}`);
    })();
  }

  /** Returns the repo row for `repoPath`, inserting it if new. */
  upsertRepo(repoPath: string): RepoRow {
    this.db
      .prepare('INSERT INTO repos (path, added_at) VALUES (?, ?) ON CONFLICT(path) DO NOTHING')
      .run(repoPath, Math.floor(Date.now() / 1000));
    return this.db.prepare('SELECT id, path FROM repos WHERE path = ?').get(repoPath) as RepoRow;
  }

  listRepos(): RepoRow[] {
    return this.db.prepare('SELECT id, path FROM repos ORDER BY id').all() as RepoRow[];
  }

  /**
   * Returns the worktree row for `worktreePath`, creating it with a fresh token and the port after
   * every port any worktree has or remembers, if new. (A port another program holds is handled at
   * listen time: the worktree process moves to the next free one and the host records it with
   * setWorktreePort.)
   */
  ensureWorktree(
    repoId: number,
    worktreePath: string,
    firstPort: number = FIRST_WORKTREE_PORT,
  ): WorktreeRow {
    const existing = this.getWorktreeByPath(worktreePath);
    if (existing) return existing;
    const insert = this.db.transaction(() => {
      const port = Math.max(firstPort, this.highestPort() + 1);
      this.db
        .prepare('INSERT INTO worktrees (repo_id, path, port, token) VALUES (?, ?, ?, ?)')
        .run(repoId, worktreePath, port, newToken());
    });
    insert();
    return this.getWorktreeByPath(worktreePath)!;
  }

  /** The highest port any worktree has or remembers (0: none). */
  private highestPort(): number {
    const row = this.db
      .prepare('SELECT MAX(port) AS port, MAX(moved_from) AS movedFrom FROM worktrees')
      .get() as { port: number | null; movedFrom: number | null };
    return Math.max(row.port ?? 0, row.movedFrom ?? 0);
  }

  /**
   * Records that a worktree's server now lives on `port`: with `movedFrom` the port it had (another
   * program took it); null when the user chose the port (no move to remember).
   */
  setWorktreePort(worktreeId: number, port: number, movedFrom: number | null = null): void {
    this.db.transaction(() => {
      // Another worktree may have been assigned this port (a worktree added while this one was
      // moving) and not be using it: it gets a port nobody has or remembers — not our old one,
      // which another program holds — and remembers the one it had.
      const holder = this.db
        .prepare(
          'SELECT id, port, moved_from AS movedFrom FROM worktrees WHERE port = ? AND id != ?',
        )
        .get(port, worktreeId) as
        { id: number; port: number; movedFrom: number | null } | undefined;
      if (holder) this.db.prepare('UPDATE worktrees SET port = -id WHERE id = ?').run(holder.id);
      this.db
        .prepare('UPDATE worktrees SET port = ?, moved_from = ? WHERE id = ?')
        .run(port, movedFrom, worktreeId);
      if (holder) {
        this.db
          .prepare('UPDATE worktrees SET port = ?, moved_from = ? WHERE id = ?')
          .run(Math.max(port, this.highestPort()) + 1, holder.movedFrom ?? holder.port, holder.id);
      }
    })();
  }

  /**
   * The ports the other worktrees have or remember (WorktreeRow.movedFrom): a worktree that moves
   * never takes one of them.
   */
  portsOfOtherWorktrees(worktreeId: number): number[] {
    const rows = this.db
      .prepare('SELECT port, moved_from AS movedFrom FROM worktrees WHERE id != ?')
      .all(worktreeId) as { port: number; movedFrom: number | null }[];
    return rows.flatMap((row) => (row.movedFrom === null ? [row.port] : [row.port, row.movedFrom]));
  }

  getWorktreeByPath(worktreePath: string): WorktreeRow | undefined {
    return this.selectWorktrees('WHERE path = ?', worktreePath)[0];
  }

  getWorktreeByPort(port: number): WorktreeRow | undefined {
    return this.selectWorktrees('WHERE port = ?', port)[0];
  }

  listWorktrees(repoId: number): WorktreeRow[] {
    return this.selectWorktrees('WHERE repo_id = ? ORDER BY id', repoId);
  }

  private selectWorktrees(where: string, ...params: unknown[]): WorktreeRow[] {
    type Raw = Omit<WorktreeRow, 'autostart' | 'requireToken' | 'justTasks'> & {
      autostart: number;
      requireToken: number;
      justTasks: number;
    };
    const rows = this.db
      .prepare(
        `SELECT id, repo_id AS repoId, path, port, token, autostart, require_token AS requireToken,
                just_tasks AS justTasks, moved_from AS movedFrom
         FROM worktrees ${where}`,
      )
      .all(...params) as Raw[];
    return rows.map((row) => ({
      ...row,
      autostart: row.autostart === 1,
      requireToken: row.requireToken === 1,
      justTasks: row.justTasks === 1,
    }));
  }

  setWorktreeSettings(
    worktreeId: number,
    settings: { autostart: boolean; requireToken: boolean; justTasks: boolean },
  ): void {
    this.db
      .prepare('UPDATE worktrees SET autostart = ?, require_token = ?, just_tasks = ? WHERE id = ?')
      .run(
        settings.autostart ? 1 : 0,
        settings.requireToken ? 1 : 0,
        settings.justTasks ? 1 : 0,
        worktreeId,
      );
  }

  setWorktreeToken(worktreeId: number, token: string): void {
    this.db.prepare('UPDATE worktrees SET token = ? WHERE id = ?').run(token, worktreeId);
  }

  deleteWorktree(worktreeId: number): void {
    this.db.prepare('DELETE FROM worktrees WHERE id = ?').run(worktreeId);
  }

  /** Forgets a repo and its worktrees (ports and tokens included). */
  deleteRepo(repoId: number): void {
    this.db.prepare('DELETE FROM repos WHERE id = ?').run(repoId);
  }

  /**
   * Stores a worktree's finished tool calls (oldest first), each cut to boundActivityEntry's
   * bounds, and drops its older ones beyond the newest `keep`, in one transaction. A worktree's
   * rows thus hold at most `keep` entries of a few KB each.
   */
  appendActivity(worktreeId: number, entries: readonly ActivityEntry[], keep: number): void {
    if (entries.length === 0) return;
    const insert = this.db.prepare('INSERT INTO activity (worktree_id, entry) VALUES (?, ?)');
    const trim = this.db.prepare(
      `DELETE FROM activity WHERE worktree_id = ? AND id <= (
         SELECT id FROM activity WHERE worktree_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
    );
    this.db.transaction(() => {
      for (const entry of entries)
        insert.run(worktreeId, JSON.stringify(boundActivityEntry(entry)));
      trim.run(worktreeId, worktreeId, Math.max(0, keep));
    })();
  }

  /**
   * A worktree's newest `limit` tool calls, oldest first, each cut to boundActivityEntry's bounds.
   * Rows that do not parse are skipped, and so are rows longer than MAX_STORED_ACTIVITY_CHARS
   * (written before entries were cut, or planted): they are never brought into memory, so a
   * database holding 1,000 entries of 7 MB each opens (it ran every start out of memory).
   * Rows are read one at a time, newest first, along the (worktree_id, id) index: no sort holds them.
   */
  recentActivity(worktreeId: number, limit: number): { entries: ActivityEntry[]; skipped: number } {
    const rows = this.db
      .prepare(
        `SELECT CASE WHEN length(entry) <= ? THEN entry END AS entry FROM activity
         WHERE worktree_id = ? ORDER BY id DESC LIMIT ?`,
      )
      .iterate(MAX_STORED_ACTIVITY_CHARS, worktreeId, Math.max(0, limit)) as Iterable<{
      entry: string | null;
    }>;
    const entries: ActivityEntry[] = [];
    let skipped = 0;
    for (const row of rows) {
      let parsed: unknown;
      try {
        parsed = row.entry === null ? undefined : JSON.parse(row.entry);
      } catch {
        parsed = undefined;
      }
      const entry = ActivityEntrySchema.safeParse(parsed);
      if (entry.success) entries.push(boundActivityEntry(entry.data));
      else skipped++;
    }
    return { entries: entries.reverse(), skipped };
  }

  /** Deletes a worktree's stored tool calls that recentActivity skips as too long; returns how many. */
  dropOversizedActivity(worktreeId: number): number {
    return this.db
      .prepare('DELETE FROM activity WHERE worktree_id = ? AND length(entry) > ?')
      .run(worktreeId, MAX_STORED_ACTIVITY_CHARS).changes;
  }

  getSetting(key: string): string | undefined {
    const row = this.db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as
      { value: string } | undefined;
    return row?.value;
  }

  setSetting(key: string, value: string): void {
    this.db
      .prepare(
        'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
      )
      .run(key, value);
  }

  /** Returns the stored value of `key`, storing `create()` first if there is none. */
  getOrCreateSetting(key: string, create: () => string): string {
    const existing = this.getSetting(key);
    if (existing !== undefined) return existing;
    const value = create();
    this.setSetting(key, value);
    return value;
  }

  /** The better-sqlite3 handle, for parts that keep their own tables (main/chat/conversation-store.ts). */
  get connection(): Database.Database {
    return this.db;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
