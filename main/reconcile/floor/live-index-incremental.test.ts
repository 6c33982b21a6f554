// The live index applies each file and spec event to what it knows (live-index-update.ts) instead
// of scanning again: after every step of a sequence of adds, edits, removes and renames of files
// and specs — in a real repository, with the real watcher — the watched engine's check, drift
// score and window state must equal those of a fresh engine that scans everything, and the index
// must have kept its snapshot (applied the events, never dropped it). What it cannot vouch for
// (.gitignore, `git add`, a new directory, a branch switch) drops the snapshot, and the answers
// are still those of a fresh scan.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import { git, makeTempRepo, writeFiles, specGoverning } from '../../testing/temp-repo.ts';
import { ReconcileEngine } from '../reconcile-engine.ts';
import { cleanupsAfterEach } from '../../testing/cleanups.ts';
import { watchedEngine } from '../../testing/sync-tap-fixtures.ts';

const SYSTEM = `schema_version: '0.8'
intent: The app.
tier: registered
subsystems:
  - $ref: ./app.spec.yaml
artifacts:
  docs:
    - path: README.md
exclude:
  - vendor/**
`;
const APP = specGoverning('App', 'src/**');
const LIB = `schema_version: '0.8'
intent: Lib.
tier: registered
artifacts:
  code:
    - path: lib/*.ts
    - path: lib/none/**
`;

const cleanups = cleanupsAfterEach();

/** A state without what differs between two computations of the same worktree. */
function comparable(state: ReconcileState) {
  const { computedAt: _at, durationMs: _ms, ...rest } = state;
  return rest;
}

/** What a fresh engine, with no index, answers now. */
async function scanned(root: string) {
  const engine = new ReconcileEngine({ root });
  try {
    return {
      check: await engine.check({}),
      score: await engine.driftScore({}),
      state: comparable(await engine.computeState('main')),
    };
  } finally {
    engine.close();
  }
}

/** The watched engine's answers: check syncs (every change made so far is applied) first. */
async function live(engine: ReconcileEngine) {
  return {
    check: await engine.check({}),
    score: await engine.driftScore({}),
    state: comparable(await engine.computeState('main')),
  };
}

describe('the live index, incrementally', () => {
  it('equals a fresh full computation after adds, edits, removes and renames of files and specs', async () => {
    const repo = await makeTempRepo({
      '.gitignore': '*.log\n',
      '.notarai/system.spec.yaml': SYSTEM,
      '.notarai/app.spec.yaml': APP,
      'README.md': '# app\n',
      'src/a.ts': 'alpha\n',
      'src/b.ts': 'bravo\n',
      'src/c.ts': 'charlie\n',
      'lib/x.ts': 'x\n',
      'lib/notes.md': 'notes\n',
      'vendor/v.js': 'v\n',
    });
    cleanups.push(() => repo.cleanup());
    await git(repo.root, 'checkout', '-q', '-b', 'feature');
    const { engine, index } = await watchedEngine(repo, cleanups);
    await engine.markReconciled(['src/a.ts', 'src/b.ts', 'src/c.ts', '.notarai/app.spec.yaml']);
    expect(await live(engine)).toEqual(await scanned(repo.root));
    const dropped = index.dropReasons.length;

    const file = (name: string) => path.join(repo.root, name);
    const steps: [string, () => Promise<unknown>][] = [
      ['a new governed file (untracked)', () => writeFiles(repo.root, { 'src/d.ts': 'delta\n' })],
      ['a new ungoverned file', () => writeFiles(repo.root, { 'lib/y.md': 'why\n' })],
      ['an ignored file', () => writeFiles(repo.root, { 'src/debug.log': 'noise\n' })],
      ['an edit of a tracked, reconciled file', () => writeFile(file('src/a.ts'), 'ALPHA!\n')],
      ['an edit of an untracked file', () => writeFile(file('src/d.ts'), 'DELTA\n')],
      ['a tracked file removed', () => rm(file('src/c.ts'))],
      ['an untracked file renamed', () => rename(file('src/d.ts'), file('src/e.ts'))],
      ['a tracked file renamed', () => rename(file('src/b.ts'), file('src/b2.ts'))],
      ['an untracked file removed', () => rm(file('lib/y.md'))],
      ['a new spec', () => writeFiles(repo.root, { '.notarai/lib.spec.yaml': LIB })],
      [
        'a spec edited (its globs change)',
        () => writeFile(file('.notarai/lib.spec.yaml'), LIB.replace('lib/*.ts', 'lib/**')),
      ],
      [
        'a spec edited (a behavior loses its then)',
        () => writeFile(file('.notarai/app.spec.yaml'), APP.replace('    then: an answer\n', '')),
      ],
      [
        'a spec that no longer parses',
        () => writeFile(file('.notarai/lib.spec.yaml'), 'intent: [broken\n'),
      ],
      ['a spec fixed again', () => writeFile(file('.notarai/lib.spec.yaml'), LIB)],
      [
        'a spec renamed',
        () => rename(file('.notarai/lib.spec.yaml'), file('.notarai/library.spec.yaml')),
      ],
      [
        'the system spec edited',
        () => writeFile(file('.notarai/system.spec.yaml'), `${SYSTEM}  - lib/*.md\n`),
      ],
      ['a spec removed', () => rm(file('.notarai/library.spec.yaml'))],
    ];
    for (const [what, step] of steps) {
      await step();
      expect(await live(engine), what).toEqual(await scanned(repo.root));
    }
    // Every step above was applied to the snapshot: none ended it.
    expect(index.dropReasons.slice(dropped)).toEqual([]);
    // The watcher may hand several steps over in one batch: applied at least once, never dropped.
    expect(index.counts.applied).toBeGreaterThan(0);
    // An edit back to the committed content: git's own `git diff` (porcelain, as the changed set
    // needs) then refreshes the index's stat data, an index event, which ends the snapshot.
    await writeFile(file('src/a.ts'), 'alpha\n');
    expect(await live(engine)).toEqual(await scanned(repo.root));
  });

  it('falls back to a full scan for what it cannot vouch for, and is right after each', async () => {
    const repo = await makeTempRepo({
      '.notarai/app.spec.yaml': APP,
      'src/a.ts': 'alpha\n',
      'src/b.ts': 'bravo\n',
    });
    cleanups.push(() => repo.cleanup());
    await git(repo.root, 'checkout', '-q', '-b', 'feature');
    const { engine, index } = await watchedEngine(repo, cleanups);
    await engine.markReconciled(['src/a.ts', '.notarai/app.spec.yaml']);
    expect(await live(engine)).toEqual(await scanned(repo.root));

    const steps: [string, () => Promise<unknown>][] = [
      ['a .gitignore hiding a file', () => writeFiles(repo.root, { '.gitignore': 'src/b.ts\n' })],
      ['a new file in a new directory', () => writeFiles(repo.root, { 'src/deep/new.ts': 'n\n' })],
      ['git add (the index moves)', () => git(repo.root, 'add', 'src/deep/new.ts')],
      [
        'a directory removed',
        async () => {
          await rm(path.join(repo.root, 'src/deep'), { recursive: true });
          await git(repo.root, 'rm', '-q', '--cached', 'src/deep/new.ts');
        },
      ],
      ['an empty directory made', () => mkdir(path.join(repo.root, 'src/empty'))],
      ['a branch switch', () => git(repo.root, 'checkout', '-q', 'main')],
    ];
    for (const [what, step] of steps) {
      const before = index.counts.dropped;
      await live(engine); // a snapshot to keep or drop
      await step();
      expect(await live(engine), what).toEqual(await scanned(repo.root));
      expect(index.counts.dropped, what).toBeGreaterThan(before);
    }
  });
});
