// The CLI's remembered classification (floor/classification-store.ts): `grove check` and
// `grove score` run again classify only the governed files that moved since the last run. After
// every step of a seeded random sequence (edits, touches, deletes, renames, new files, spec edits,
// marks by Grove, rows written by another SQLite connection as NotarAI's CLI writes them, the
// cache deleted), check's and score's reports must equal those of a run that remembers nothing; a
// run with nothing changed reads no cache row; an edit reads the rows of that file alone; and a
// memory that no longer holds (NotarAI's database rewritten with its mtime put back, a corrupt
// memory file) is not used.
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import {
  mkdir,
  readFile,
  readdir,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { git, makeTempDir, makeTempRepo, specGoverning } from '../../testing/temp-repo.ts';
import { seededRandom } from '../../testing/seeded-random.ts';
import { HashCache } from '../floor/hash-cache.ts';
import { ReconcileEngine } from '../reconcile-engine.ts';
import { runCheck, runCheckWithParts } from './notarai-check.ts';
import { scoreSpecs, scoreSpecsWithParts } from './notarai-score.ts';
import { standaloneParts } from './notarai-inputs.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const spec = specGoverning;
const DIRS = ['src', 'lib', 'docs'];
const GLOBS = ['src/**', 'lib/**', 'docs/*.md', 'src/*.ts'];

/** check's and score's reports as `grove check` and `grove score` make them. */
async function reports(root: string) {
  return { check: await runCheck(root), score: await scoreSpecs(root) };
}

/** The same, from parts that remember nothing. */
async function fresh(root: string) {
  const [parts, close] = await standaloneParts(root);
  const { classificationStore: _none, ...forgetful } = parts;
  try {
    return {
      check: await runCheckWithParts(forgetful),
      score: await scoreSpecsWithParts(forgetful),
    };
  } finally {
    await parts.cache.flush();
    close();
  }
}

/**
 * Files last modified in an earlier second than any run records (the stat fast path trusts no stat
 * taken in the second of the file's last write), each write at a time of its own.
 */
let clock = Math.floor(Date.now() / 1000) - 100_000;
async function ageFile(file: string): Promise<void> {
  clock += 1;
  await utimes(file, clock, clock);
}

/** Counts the cache reads of the runs made while it is on. */
function countReads() {
  const whole = vi.spyOn(HashCache.prototype, 'readReconciled');
  const some = vi.spyOn(HashCache.prototype, 'readRowsOf');
  return {
    whole: () => whole.mock.calls.length,
    some: () => some.mock.calls.map(([paths]) => [...paths]),
    reset: () => {
      whole.mockClear();
      some.mockClear();
    },
  };
}

async function repoWith(files: Record<string, string>) {
  const repo = await makeTempRepo(files);
  cleanups.push(() => repo.cleanup());
  for (const file of Object.keys(files)) await ageFile(path.join(repo.root, file));
  return repo;
}

/** One governed file, marked. */
async function markedOneFile() {
  const repo = await repoWith({
    '.notarai/app.spec.yaml': spec('App', 'src/**'),
    'src/a.ts': 'a\n',
  });
  const engine = new ReconcileEngine({ root: repo.root });
  cleanups.push(() => engine.close());
  await engine.markReconciled(['src/a.ts']);
  return repo;
}

describe("the CLI's remembered classification", () => {
  it('a run with nothing changed reads no cache row; an edit reads that file alone', async () => {
    const repo = await repoWith({
      '.notarai/app.spec.yaml': spec('App', 'src/**'),
      'src/a.ts': 'a\n',
      'src/b.ts': 'b\n',
      'src/c.ts': 'c\n',
    });
    const engine = new ReconcileEngine({ root: repo.root });
    cleanups.push(() => engine.close());
    await engine.markReconciled(['src/a.ts', 'src/b.ts', '.notarai/app.spec.yaml']);
    const reads = countReads();
    const first = await reports(repo.root);
    expect(reads.whole()).toBeGreaterThan(0); // nothing remembered yet
    expect(first).toEqual(await fresh(repo.root));

    reads.reset();
    expect(await reports(repo.root)).toEqual(first);
    expect(reads.whole()).toBe(0);
    expect(reads.some()).toEqual([]);

    await writeFile(path.join(repo.root, 'src/a.ts'), 'edited\n');
    await ageFile(path.join(repo.root, 'src/a.ts'));
    reads.reset();
    const edited = await reports(repo.root);
    expect(reads.whole()).toBe(0);
    // check reads its rows and remembers what it found; score then takes it from the memory.
    expect(reads.some()).toEqual([['src/a.ts']]);
    reads.reset();
    expect(edited).toEqual(await fresh(repo.root));
    expect(edited).not.toEqual(first);
  });

  it('equals a run that remembers nothing after every step of a random sequence (seeded, 50 steps)', async () => {
    const files: Record<string, string> = {
      '.notarai/s0.spec.yaml': spec('S0', 'src/**'),
      '.notarai/s1.spec.yaml': spec('S1', 'lib/**'),
    };
    for (const dir of DIRS) {
      for (let index = 0; index < 4; index++) files[`${dir}/f${index}.ts`] = `${dir} ${index}\n`;
      files[`${dir}/notes.md`] = `${dir} notes\n`;
    }
    const repo = await repoWith(files);
    await git(repo.root, 'checkout', '-q', '-b', 'feature');
    const absolute = (file: string) => path.join(repo.root, file);
    const engine = new ReconcileEngine({ root: repo.root });
    cleanups.push(() => engine.close());
    await engine.markReconciled(Object.keys(files));
    const present = new Set(Object.keys(files).filter((file) => !file.startsWith('.notarai/')));
    const specs = ['.notarai/s0.spec.yaml', '.notarai/s1.spec.yaml'];
    const next = seededRandom(36);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const reads = countReads();
    let counter = 0;
    let remembered = 0;
    const steps: string[] = [];
    for (let step = 0; step < 50; step++) {
      const roll = next();
      const file = pick([...present]);
      let what: string;
      if (roll < 0.25) {
        what = `edit ${file}`;
        await writeFile(absolute(file), `edited ${++counter}\n`);
        // Most edits are older than the run; some are made in its second (not trusted by stat).
        if (next() < 0.8) await ageFile(absolute(file));
      } else if (roll < 0.35) {
        what = `touch ${file}`;
        await ageFile(absolute(file));
      } else if (roll < 0.45) {
        const added = `${pick(DIRS)}/n${++counter}.ts`;
        what = `add ${added}`;
        await writeFile(absolute(added), `new ${counter}\n`);
        await ageFile(absolute(added));
        present.add(added);
      } else if (roll < 0.52 && present.size > 4) {
        what = `delete ${file}`;
        await rm(absolute(file));
        present.delete(file);
      } else if (roll < 0.6) {
        const to = `${pick(DIRS)}/r${++counter}.ts`;
        what = `rename ${file} -> ${to}`;
        await rename(absolute(file), absolute(to));
        present.delete(file);
        present.add(to);
      } else if (roll < 0.66) {
        const edited = pick(specs);
        what = `spec ${edited} edited`;
        await writeFile(absolute(edited), spec(`E${++counter}`, pick(GLOBS)));
        await ageFile(absolute(edited));
      } else if (roll < 0.78) {
        const marked = [...present, ...specs].filter(() => next() < 0.5);
        what = `mark ${marked.length} files`;
        await engine.markReconciled(marked);
      } else if (roll < 0.88) {
        // As NotarAI's CLI writes: its own connection, a row of another hash (or a new row).
        what = `row of ${file} written by another connection`;
        await engine.markReconciled([]); // the database exists
        const db = new Database(path.join(repo.root, '.notarai/.cache/notarai.db'));
        try {
          db.prepare(
            'INSERT OR REPLACE INTO file_cache (path, blake3_hash, updated_at) VALUES (?, ?, ?)',
          ).run(file, 'f'.repeat(64), 1_700_000_000);
        } finally {
          db.close();
        }
      } else if (roll < 0.92) {
        what = 'cache deleted';
        await engine.clearCache();
      } else {
        what = 'nothing';
      }
      steps.push(what);
      reads.reset();
      const remembering = await reports(repo.root);
      if (reads.whole() === 0) remembered++;
      reads.reset();
      expect(
        remembering,
        `step ${step}: ${what} (after ${steps.slice(-4, -1).join('; ')})`,
      ).toEqual(await fresh(repo.root));
    }
    // Most runs took what they could from the memory and read no whole table.
    expect(remembered).toBeGreaterThan(25);
  }, 300_000);

  it("is not used once NotarAI's database changed, even with its size and mtime put back", async () => {
    const repo = await repoWith({
      '.notarai/app.spec.yaml': spec('App', 'src/**'),
      'src/a.ts': 'a\n',
      'src/b.ts': 'b\n',
    });
    const engine = new ReconcileEngine({ root: repo.root });
    cleanups.push(() => engine.close());
    await engine.markReconciled(['src/a.ts', 'src/b.ts', '.notarai/app.spec.yaml']);
    const clean = await reports(repo.root);
    expect(
      clean.check.findings.some((finding) => finding.type === 'changed_since_reconciliation'),
    ).toBe(false);
    await reports(repo.root); // remembered

    // Another hash for src/a.ts, written in place (same size), the file's times put back.
    const database = path.join(repo.root, '.notarai/.cache/notarai.db');
    const before = statSync(database);
    setRowHash(repo.root, 'src/a.ts', '0'.repeat(64));
    await utimes(database, before.atime, before.mtime);
    expect(statSync(database).size).toBe(before.size);
    const reads = countReads();
    const after = await reports(repo.root);
    expect(reads.whole()).toBeGreaterThan(0);
    expect(after).toEqual(await fresh(repo.root));
    expect(
      after.check.findings.some((finding) => finding.type === 'changed_since_reconciliation'),
    ).toBe(true);
  });

  it('a corrupt or truncated memory file is an empty memory', async () => {
    const repo = await markedOneFile();
    const expected = await reports(repo.root);
    const folder = path.join(process.env.GROVE_CACHE_DIR as string, 'classifications');
    const memories = await readdir(folder);
    for (const name of memories) {
      const file = path.join(folder, name);
      const bytes = await readFile(file);
      for (const broken of [
        bytes.subarray(0, bytes.length - 1),
        Buffer.concat([bytes, Buffer.from([0])]),
        Buffer.from('not a memory'),
        Buffer.alloc(0),
      ]) {
        await writeFile(file, broken);
        expect(await reports(repo.root)).toEqual(expected);
      }
    }
  });

  it('keeps nothing in the worktree when the cache directory is inside it', async () => {
    const repo = await markedOneFile();
    const saved = process.env.GROVE_CACHE_DIR;
    process.env.GROVE_CACHE_DIR = path.join(repo.root, 'cache');
    cleanups.push(() => {
      process.env.GROVE_CACHE_DIR = saved;
    });
    await reports(repo.root);
    await reports(repo.root);
    await expect(readdir(path.join(repo.root, 'cache'))).rejects.toThrow(/ENOENT/);
    const elsewhere = await makeTempDir();
    cleanups.push(() => rm(elsewhere, { recursive: true }));
    process.env.GROVE_CACHE_DIR = elsewhere;
    await reports(repo.root);
    expect(await readdir(path.join(elsewhere, 'classifications'))).toHaveLength(1);
  });
});

const SPEC = spec('App', 'src/**');
const DB = '.notarai/.cache/notarai.db';

/** The changed files `grove check` reports (remembering). */
/** Another hash in `file`'s row of NotarAI's cache, written in place by a connection of its own. */
function setRowHash(root: string, file: string, hash: string): void {
  const db = new Database(path.join(root, DB));
  try {
    db.prepare('UPDATE file_cache SET blake3_hash = ? WHERE path = ?').run(hash, file);
  } finally {
    db.close();
  }
}

async function changed(root: string): Promise<string[]> {
  const report = await runCheck(root);
  return report.findings
    .filter((finding) => finding.type === 'changed_since_reconciliation')
    .map((finding) => finding.file_path as string)
    .sort();
}

/** The same from parts that remember nothing. */
async function changedFresh(root: string): Promise<string[]> {
  const [parts, close] = await standaloneParts(root);
  const { classificationStore: _none, ...forgetful } = parts;
  try {
    const report = await runCheckWithParts(forgetful);
    return report.findings
      .filter((finding) => finding.type === 'changed_since_reconciliation')
      .map((finding) => finding.file_path as string)
      .sort();
  } finally {
    await parts.cache.flush();
    close();
  }
}

/** NotarAI's rows, read by a table scan (no index). */
function tableRows(root: string): [string, string][] {
  const db = new Database(path.join(root, DB), { readonly: true });
  try {
    return db
      .prepare('SELECT path, blake3_hash FROM file_cache NOT INDEXED ORDER BY rowid')
      .raw(true)
      .all() as [string, string][];
  } finally {
    db.close();
  }
}

/** Root pages of NotarAI's table and of its primary key's index, and the page size. */
function layout(root: string): { table: number; index: number; pageSize: number } {
  const db = new Database(path.join(root, DB), { readonly: true });
  try {
    const pages = new Map(
      (
        db.prepare('SELECT name, rootpage FROM sqlite_master').all() as {
          name: string;
          rootpage: number;
        }[]
      ).map((row) => [row.name, row.rootpage]),
    );
    return {
      table: pages.get('file_cache')!,
      index: pages.get('sqlite_autoindex_file_cache_1')!,
      pageSize: db.pragma('page_size', { simple: true }) as number,
    };
  } finally {
    db.close();
  }
}

/** Four governed files, all marked by Grove, aged; the engine closed (the file is ours to edit). */
async function markedRepo() {
  const files = {
    '.notarai/app.spec.yaml': SPEC,
    'src/a.ts': 'a\n',
    'src/b.ts': 'b\n',
    'src/c.ts': 'c\n',
    'src/d.ts': 'd\n',
  };
  const repo = await makeTempRepo(files);
  cleanups.push(() => repo.cleanup());
  for (const file of Object.keys(files)) await ageFile(path.join(repo.root, file));
  const engine = new ReconcileEngine({ root: repo.root });
  await engine.markReconciled(Object.keys(files));
  await engine.close();
  return repo.root;
}

describe('the remembered classification against damaged databases and odd cache directories (found in review)', () => {
  it('a table and its index that disagree give the same answer when only a few rows are read', async () => {
    const root = await markedRepo();
    // A torn or crafted file: the table row of src/c.ts names src/a.ts (another hash); the index
    // still says src/a.ts -> its own row. A table scan (readReconciled, NotarAI's check) sees
    // src/a.ts with c's hash; an index seek (readRowsOf) sees a's own hash.
    const { table, pageSize } = layout(root);
    const bytes = await readFile(path.join(root, DB));
    const page = bytes.subarray((table - 1) * pageSize, table * pageSize);
    const at = page.indexOf('src/c.ts');
    expect(at).toBeGreaterThan(0);
    page.write('src/a.ts', at);
    await writeFile(path.join(root, DB), bytes);

    expect(await changed(root)).toEqual(await changedFresh(root)); // [a, c]: nothing remembered
    await ageFile(path.join(root, 'src/a.ts')); // moved, same content: only a is read again
    const fresh = await changedFresh(root);
    expect(fresh).toEqual(['src/a.ts', 'src/c.ts']);
    expect(await changed(root)).toEqual(fresh);
    expect(await changed(root)).toEqual(fresh); // and stays so (remembered)
  });

  it("a damaged primary-key index leaves NotarAI's rows alone and the answer right", async () => {
    const root = await markedRepo();
    // The table is whole, the index's root page is not (what a torn journal_mode=MEMORY commit
    // can leave): a table scan reads every row; an index seek is SQLITE_CORRUPT.
    const { index, pageSize } = layout(root);
    const bytes = await readFile(path.join(root, DB));
    bytes[(index - 1) * pageSize] = 0; // not a b-tree page type
    await writeFile(path.join(root, DB), bytes);

    expect(await changed(root)).toEqual([]); // nothing remembered: a table scan, all match
    await ageFile(path.join(root, 'src/a.ts'));
    expect(await changedFresh(root)).toEqual([]);
    expect(tableRows(root)).toHaveLength(5); // a run that remembers nothing left the rows alone
    const remembering = await changed(root);
    const rowsAfter = tableRows(root);
    // The rows of a few files are read by a table scan too: the index is never used, never met
    // as corrupt, and the file is not recreated.
    expect(rowsAfter).toHaveLength(5);
    expect(remembering).toEqual([]);
  });

  it("a cache directory in the worktree whose name starts with '..' is not used", async () => {
    const root = await markedRepo();
    const saved = process.env.GROVE_CACHE_DIR;
    cleanups.push(() => {
      process.env.GROVE_CACHE_DIR = saved;
    });
    process.env.GROVE_CACHE_DIR = path.join(root, '..cache');
    await changed(root);
    // A name that starts with '..' is still inside: nothing is written there.
    await expect(readdir(path.join(root, '..cache'))).rejects.toThrow(/ENOENT/);
  });

  it('a cache directory reached through a symlink to the worktree is not used', async () => {
    const root = await markedRepo();
    const outside = await makeTempDir();
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    await symlink(root, path.join(outside, 'link'));
    await mkdir(path.join(root, 'cache'), { mode: 0o700 });
    const saved = process.env.GROVE_CACHE_DIR;
    cleanups.push(() => {
      process.env.GROVE_CACHE_DIR = saved;
    });
    process.env.GROVE_CACHE_DIR = path.join(outside, 'link', 'cache');
    await changed(root);
    // The path leads into the worktree: nothing is written there.
    expect(await readdir(path.join(root, 'cache'))).toEqual([]);
  });

  it("a write by another process while a run reads rows gives that database's answer, not a mix", async () => {
    const root = await markedRepo();
    expect(await changed(root)).toEqual([]);
    await ageFile(path.join(root, 'src/a.ts')); // moved: its rows are read next run
    // NotarAI's CLI writes b's row at the moment the run reads a's.
    const readRowsOf = HashCache.prototype.readRowsOf;
    vi.spyOn(HashCache.prototype, 'readRowsOf').mockImplementation(async function (
      this: HashCache,
      paths,
    ) {
      setRowHash(root, 'src/b.ts', 'f'.repeat(64));
      return readRowsOf.call(this, paths);
    });
    expect(await changed(root)).toEqual(['src/b.ts']);
    vi.restoreAllMocks();
    expect(await changed(root)).toEqual(['src/b.ts']);
    expect(await changedFresh(root)).toEqual(['src/b.ts']);
  });

  it('deleting grove-stats.db makes the next check read every file again', async () => {
    const root = await markedRepo();
    const file = path.join(root, 'src/b.ts');
    await changed(root);
    // Same size, mtime put back (cp -p, tar, rsync -a --inplace): what no stat can see. Deleting
    // Grove's stat cache is the way to have every file read again, and ends the memory too.
    const before = await stat(file);
    await writeFile(file, 'B\n');
    await utimes(file, before.atime, before.mtime);
    await rm(path.join(root, '.notarai/.cache/grove-stats.db'));
    const fresh = await changedFresh(root);
    expect(fresh).toEqual(['src/b.ts']);
    expect(await changed(root)).toEqual(fresh);
  });
});
