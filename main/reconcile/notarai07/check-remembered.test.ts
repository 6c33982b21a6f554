// The CLI's remembered classification (floor/classification-store.ts): `grove check` and
// `grove score` run again classify only the governed files that moved since the last run. After
// every step of a seeded random sequence (edits, touches, deletes, renames, new files, spec edits,
// marks by Grove, rows written by another SQLite connection as NotarAI's CLI writes them, the
// cache deleted), check's and score's reports must equal those of a run that remembers nothing; a
// run with nothing changed reads no cache row; an edit reads the rows of that file alone; and a
// memory that no longer holds (NotarAI's database rewritten with its mtime put back, a corrupt
// memory file) is not used.
import Database from 'better-sqlite3';
import { readdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { git, makeTempDir, makeTempRepo } from '../../testing/temp-repo.ts';
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

const spec = (name: string, glob: string): string => `schema_version: '0.8'
intent: ${name}.
behaviors:
  - name: works
    given: a call
    then: an answer
artifacts:
  code:
    - path: ${glob}
`;
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
    const { statSync } = await import('node:fs');
    const before = statSync(database);
    const db = new Database(database);
    try {
      db.prepare('UPDATE file_cache SET blake3_hash = ? WHERE path = ?').run(
        '0'.repeat(64),
        'src/a.ts',
      );
    } finally {
      db.close();
    }
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
    const repo = await repoWith({
      '.notarai/app.spec.yaml': spec('App', 'src/**'),
      'src/a.ts': 'a\n',
    });
    const engine = new ReconcileEngine({ root: repo.root });
    cleanups.push(() => engine.close());
    await engine.markReconciled(['src/a.ts']);
    const expected = await reports(repo.root);
    const folder = path.join(process.env.GROVE_CACHE_DIR as string, 'classifications');
    const memories = await readdir(folder);
    const { readFile } = await import('node:fs/promises');
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
    const repo = await repoWith({
      '.notarai/app.spec.yaml': spec('App', 'src/**'),
      'src/a.ts': 'a\n',
    });
    const engine = new ReconcileEngine({ root: repo.root });
    cleanups.push(() => engine.close());
    await engine.markReconciled(['src/a.ts']);
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
