// The live index against a real repository and a real watcher: a warm get_spec_diff answers from
// memory while nothing moved, and never gives a stale answer once something did — each change is
// made and the call follows at once, with no pause for the watcher, and the answer must equal that
// of a fresh engine that scans everything. Edits that keep size and mtime, renames, deletes,
// creations, touches, commits and a moved base are all tried.
import { readFile, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { blake3 } from '@napi-rs/blake-hash';
import { describe, expect, it } from 'vitest';
import { git, makeTempRepo, writeFiles } from '../../testing/temp-repo.ts';
import { ReconcileEngine } from '../reconcile-engine.ts';
import { cleanupsAfterEach } from '../../testing/cleanups.ts';
import { watchedEngine } from '../../testing/sync-tap-fixtures.ts';

const SPEC =
  "schema_version: '0.8'\nintent: App.\ntier: registered\nartifacts:\n  code:\n    - path: src/**\n";
const SPEC_PATH = '.notarai/app.spec.yaml';
const ARGS = { spec_path: SPEC_PATH, base_branch: 'main' };

const cleanups = cleanupsAfterEach();

/** What a fresh engine, with no index, answers now. */
async function scanned(root: string) {
  const engine = new ReconcileEngine({ root });
  try {
    return await engine.getSpecDiff(ARGS);
  } finally {
    engine.close();
  }
}

/** A spec governing src/ and four files under it. */
const FOUR_FILES = {
  '.notarai/app.spec.yaml': SPEC,
  'src/a.ts': 'alpha\n',
  'src/b.ts': 'bravo\n',
  'src/c.ts': 'charlie\n',
  'src/d.ts': 'delta\n',
};

/** Rewrites `file` (alpha -> ALPHA: same size) and puts its mtime back. */
async function editKeepingSizeAndMtime(file: string): Promise<void> {
  const before = await stat(file);
  await writeFile(file, 'ALPHA\n');
  await utimes(file, before.atime, before.mtime);
}

const answeredFromIndex = (engine: ReconcileEngine): boolean =>
  'spec+base (live index)' in engine.lastTimings;

describe('the live index', () => {
  it('answers a warm call from memory, and every change right after it from a scan', async () => {
    const repo = await makeTempRepo(FOUR_FILES);
    cleanups.push(() => repo.cleanup());
    await git(repo.root, 'checkout', '-q', '-b', 'feature');
    const { engine } = await watchedEngine(repo, cleanups);
    await engine.markReconciled(['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts', SPEC_PATH]);
    const first = await engine.getSpecDiff(ARGS);
    expect(first.files).toEqual([]);
    const warm = await engine.getSpecDiff(ARGS);
    expect(answeredFromIndex(engine)).toBe(true);
    expect(warm).toEqual(first);

    const file = (name: string) => path.join(repo.root, name);
    const changes: [string, () => Promise<unknown>][] = [
      ['an edit that keeps size and mtime', () => editKeepingSizeAndMtime(file('src/a.ts'))],
      ['a touch (same content)', () => utimes(file('src/b.ts'), new Date(), new Date())],
      ['a rename', () => rename(file('src/b.ts'), file('src/b2.ts'))],
      ['a delete', () => rm(file('src/c.ts'))],
      ['a new file', () => writeFiles(repo.root, { 'src/e.ts': 'echo\n' })],
      ['a second edit in the same second', () => writeFile(file('src/d.ts'), 'DELTA\n')],
      ['an untracked file', () => writeFiles(repo.root, { 'src/u.ts': 'untracked\n' })],
      [
        '.git/info/exclude hiding it',
        () => writeFile(path.join(repo.root, '.git/info/exclude'), 'src/u.ts\n'),
      ],
      [
        'a commit (index and refs move)',
        async () => {
          await git(repo.root, 'add', '-A');
          await git(repo.root, 'commit', '-q', '-m', 'changes');
        },
      ],
      ['the base moves', () => git(repo.root, 'branch', '-f', 'main', 'feature')],
    ];
    for (const [what, change] of changes) {
      await engine.getSpecDiff(ARGS); // an answer the index could keep
      await change();
      const answer = await engine.getSpecDiff(ARGS); // at once: no wait for the watcher
      expect(answer, what).toEqual(await scanned(repo.root));
    }
    // Settled again: the next warm call is served from memory and still right.
    await engine.getSpecDiff(ARGS);
    const again = await engine.getSpecDiff(ARGS);
    expect(answeredFromIndex(engine)).toBe(true);
    expect(again).toEqual(await scanned(repo.root));
  }, 90_000); // many scans of a real repo: slow on a loaded 2-core machine

  it('mark_reconciled takes the hashes it vouches for, and reads every file changed right before', async () => {
    const repo = await makeTempRepo(FOUR_FILES);
    cleanups.push(() => repo.cleanup());
    const { engine } = await watchedEngine(repo, cleanups);
    const all = ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts', SPEC_PATH];
    /** What the cache holds for each file, against the BLAKE3 of what is on disk now. */
    const recorded = async () => {
      const rows = await engine.cache.readReconciled();
      const onDisk = await Promise.all(
        all.map(async (file) => {
          const bytes = await readFile(path.join(repo.root, file)).catch(() => undefined);
          return [file, bytes === undefined ? undefined : blake3(bytes).toString('hex')];
        }),
      );
      return { cache: all.map((file) => [file, rows.get(file)?.hash]), onDisk };
    };
    await engine.markReconciled(all);
    await engine.getSpecDiff(ARGS); // the index now holds every file's hash
    await engine.clearCache(); // not an event: the cache holds no worktree content
    await engine.markReconciled(all);
    expect(engine.lastMark).toEqual({ read: 0, vouched: all.length });
    let state = await recorded();
    expect(state.cache).toEqual(state.onDisk);

    const file = (name: string) => path.join(repo.root, name);
    // What each change touches: never vouched for (read again). Whether the others are depends on
    // whether the change's event was applied before the call began (the sync's tap is quick).
    const changes: [string, string[], () => Promise<unknown>][] = [
      [
        'an edit that keeps size and mtime',
        ['src/a.ts'],
        () => editKeepingSizeAndMtime(file('src/a.ts')),
      ],
      [
        'a second edit in the same second',
        ['src/b.ts'],
        () => writeFile(file('src/b.ts'), 'BRAVO\n'),
      ],
      [
        'a file replaced by a rename over it',
        ['src/c.ts'],
        async () => {
          await writeFile(file('src/c.tmp'), 'CHARLIE\n');
          await rename(file('src/c.tmp'), file('src/c.ts'));
        },
      ],
      ['an edit of the spec', [SPEC_PATH], () => writeFile(file(SPEC_PATH), `${SPEC}# edited\n`)],
      ['an edit of another file', [], () => writeFiles(repo.root, { 'src/other.ts': 'other\n' })],
    ];
    for (const [what, touched, change] of changes) {
      await engine.getSpecDiff(ARGS); // an index that holds every hash
      await change();
      await engine.markReconciled(all); // at once: no wait for the watcher
      expect(engine.lastMark.vouched, what).toBeLessThanOrEqual(all.length - touched.length);
      expect(engine.lastMark.read + engine.lastMark.vouched, what).toBe(all.length);
      state = await recorded();
      expect(state.cache, what).toEqual(state.onDisk);
    }
  });

  it('mark_reconciled reads a file whose hash came from a stat row an edit kept valid', async () => {
    const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SPEC, 'src/a.ts': 'alpha\n' });
    cleanups.push(() => repo.cleanup());
    const file = path.join(repo.root, 'src/a.ts');
    const second = Math.floor(Date.now() / 1000) - 10; // whole seconds: utimes restores it exactly
    await utimes(file, second, second);
    const { engine } = await watchedEngine(repo, cleanups);
    await engine.markReconciled(['src/a.ts', SPEC_PATH]); // a stat row valid at once
    await engine.cache.flush();
    // Same size, same inode, same mtime: the stat fast path takes the old hash (as git would).
    await writeFile(file, 'ALPHA\n');
    await utimes(file, second, second);
    await engine.getSpecDiff(ARGS); // the index holds the stat row's hash
    await engine.markReconciled(['src/a.ts']);
    expect(engine.lastMark.vouched).toBe(0);
    const rows = await engine.cache.readReconciled();
    expect(rows.get('src/a.ts')?.hash).toBe(blake3(await readFile(file)).toString('hex'));
  });

  it('never vouches for files the watcher skips (node_modules/)', async () => {
    const repo = await makeTempRepo({
      '.notarai/app.spec.yaml': SPEC.replace('src/**', 'node_modules/**'),
      'node_modules/lib/index.js': 'one\n',
    });
    cleanups.push(() => repo.cleanup());
    const { engine } = await watchedEngine(repo, cleanups);
    await engine.markReconciled(['node_modules/lib/index.js', SPEC_PATH]);
    await engine.getSpecDiff(ARGS);
    await engine.getSpecDiff(ARGS);
    await writeFile(path.join(repo.root, 'node_modules/lib/index.js'), 'two\n');
    await new Promise((resolve) => setTimeout(resolve, 200)); // no event will come, wait or not
    const answer = await engine.getSpecDiff(ARGS);
    expect(answer.files).toEqual(['node_modules/lib/index.js']);
    expect(answer).toEqual(await scanned(repo.root));
  });

  it('never vouches for a file no event reports: node_modules/, a link to it, a committed cache file', async () => {
    const repo = await makeTempRepo({
      '.notarai/app.spec.yaml': `${SPEC}    - path: '.notarai/.cache/**'\n`,
      '.gitignore': 'node_modules/\n',
      'src/a.ts': 'alpha\n',
      // Committed inside the cache directory, whose events the index takes for its own files.
      '.notarai/.cache/committed.ts': 'one\n',
    });
    cleanups.push(() => repo.cleanup());
    await writeFiles(repo.root, { 'node_modules/lib/index.js': 'one\n' });
    await symlink('node_modules/lib', path.join(repo.root, 'vendor')); // git lists the link only
    const { engine } = await watchedEngine(repo, cleanups);
    const marked = [
      'node_modules/lib/index.js',
      'vendor/index.js',
      '.notarai/.cache/committed.ts',
      'src/a.ts',
      SPEC_PATH,
    ];
    await engine.markReconciled(marked);
    await engine.getSpecDiff(ARGS);
    await engine.markReconciled(marked); // what the index could keep
    await writeFile(path.join(repo.root, 'node_modules/lib/index.js'), 'two\n');
    await writeFile(path.join(repo.root, '.notarai/.cache/committed.ts'), 'two\n');
    await new Promise((resolve) => setTimeout(resolve, 200)); // no event will come, wait or not
    const answer = await engine.getSpecDiff(ARGS);
    expect(answer.files).toEqual(['.notarai/.cache/committed.ts']);
    expect(answer).toEqual(await scanned(repo.root));
    await engine.markReconciled(marked);
    const rows = await engine.cache.readReconciled();
    const hashOf = async (file: string) =>
      blake3(await readFile(path.join(repo.root, file))).toString('hex');
    for (const file of marked) expect(rows.get(file)?.hash, file).toBe(await hashOf(file));
  });

  it('scans when there is no cache directory to sync through (and never creates one)', async () => {
    const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SPEC, 'src/a.ts': 'alpha\n' });
    cleanups.push(() => repo.cleanup());
    const { engine } = await watchedEngine(repo, cleanups);
    await engine.getSpecDiff({ ...ARGS, bypass_cache: true });
    await engine.getSpecDiff({ ...ARGS, bypass_cache: true });
    expect(answeredFromIndex(engine)).toBe(false);
    await expect(stat(path.join(repo.root, '.notarai/.cache'))).rejects.toThrow();
  });
});
