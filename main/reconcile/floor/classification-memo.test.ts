// One classification per index version (classification-memo.ts): a watched engine keeps its
// classification and what derives from the listing and the specs between calls, and updates them
// for the paths that moved. After every step of a seeded random sequence of edits, adds, deletes
// and renames of files and specs, marks and snapshots, its answers (the window's state, check and
// score under both rules, get_spec_diff, get_changed_artifacts and export_context) must equal those
// of a fresh engine with no live index; an edit of a governed file is classified alone, not with
// every governed file again; and a warm call classifies nothing.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import { git, makeTempRepo, specGoverning } from '../../testing/temp-repo.ts';
import { ReconcileEngine } from '../reconcile-engine.ts';
import { ReconcileWatcher } from '../reconcile-watcher.ts';
import { seededRandom } from '../../testing/seeded-random.ts';

const SYSTEM = `schema_version: '0.8'
intent: The app.
tier: registered
artifacts:
  docs:
    - path: README.md
exclude:
  - vendor/**
`;
const spec = specGoverning;
const GLOBS = ['src/**', 'src/*.ts', 'lib/**', 'lib/*.md', 'src/a*', 'docs/**'];
const DIRS = ['src', 'lib', 'docs', 'vendor'];

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A small deterministic generator (mulberry32): the same steps on every run. */
function comparable(state: ReconcileState) {
  const { computedAt: _at, durationMs: _ms, ...rest } = state;
  return rest;
}

/** The answer, or the error's message (a spec made invalid fails get_spec_diff). */
async function settle<T>(run: () => Promise<T>): Promise<{ value: T } | { error: string }> {
  try {
    return { value: await run() };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * What the reconciliation tools answer for these specs (the first under NotarAI's rule, the others
 * under Grove's with the review too), and export_context for all of them.
 */
async function toolAnswers(engine: ReconcileEngine, specs: readonly string[]) {
  const bySpec: Record<string, unknown> = {};
  for (const [index, spec_path] of specs.entries()) {
    const grove = index > 0;
    bySpec[spec_path] = {
      diff: await settle(() =>
        engine.getSpecDiff({
          spec_path,
          base_branch: 'main',
          ...(grove ? { with_snapshot: true, review: true } : {}),
        }),
      ),
      artifacts: await settle(() => engine.getChangedArtifacts({ spec_path })),
      ...(grove
        ? {
            code: await settle(() =>
              engine.getChangedArtifacts({ spec_path, artifact_type: 'code' }),
            ),
            context: await settle(() =>
              engine.exportContext({ baseBranch: 'main', specPath: spec_path }),
            ),
          }
        : {}),
    };
  }
  return { bySpec, exported: await settle(() => engine.exportContext({ baseBranch: 'main' })) };
}

async function answers(engine: ReconcileEngine, specs: readonly string[] = []) {
  return {
    tools: await toolAnswers(engine, specs),
    check: await engine.check({}),
    checkWithSnapshot: await engine.check({ withSnapshot: true }),
    score: await engine.driftScore({}),
    scoreWithSnapshot: await engine.driftScore({ withSnapshot: true }),
    state: comparable(await engine.computeState('main')),
  };
}

/** What a fresh engine, with no live index, answers now. */
async function fresh(root: string, specs: readonly string[] = []) {
  const engine = new ReconcileEngine({ root });
  try {
    return await answers(engine, specs);
  } finally {
    engine.close();
  }
}

describe('one classification per index version', () => {
  it('equals a fresh computation after every step of a random sequence (seeded, 60 steps)', async () => {
    const files: Record<string, string> = {
      '.notarai/system.spec.yaml': SYSTEM,
      '.notarai/s0.spec.yaml': spec('S0', 'src/*.ts'),
      '.notarai/s1.spec.yaml': spec('S1', 'lib/**'),
      'README.md': '# app\n',
      // Committed, never marked: deleted, it has no row to be missing from (git's listing with
      // --deleted leaves it out; the live index's keeps it).
      'lib/never.md': 'never marked\n',
    };
    for (const dir of DIRS) {
      for (let index = 0; index < 4; index++) files[`${dir}/f${index}.ts`] = `${dir} ${index}\n`;
      files[`${dir}/notes.md`] = `${dir} notes\n`;
    }
    const repo = await makeTempRepo(files);
    cleanups.push(() => repo.cleanup());
    await git(repo.root, 'checkout', '-q', '-b', 'feature');
    const engine = new ReconcileEngine({ root: repo.root });
    cleanups.push(() => engine.close());
    const watcher = new ReconcileWatcher({ engine, base: 'main', onState: () => undefined });
    cleanups.push(() => watcher.close());
    await watcher.start();
    await engine.markReconciled(Object.keys(files).filter((file) => file !== 'lib/never.md'));
    const specs = new Set(['.notarai/s0.spec.yaml', '.notarai/s1.spec.yaml']);
    const steps: string[] = [];
    // get_spec_diff, get_changed_artifacts and export_context for the system spec and another.
    const asked = () => {
      const sorted = [...specs].sort();
      return ['.notarai/system.spec.yaml', sorted[(steps.length * 7) % sorted.length]!];
    };
    expect(await answers(engine, asked())).toEqual(await fresh(repo.root, asked()));

    // First the cases a random order may miss: an ungoverned file beside governed ones (in the
    // folder of a spec's files: the unspecced term) added, renamed and removed.
    const scripted: [string, () => Promise<unknown>][] = [
      ['add src/beside.md', () => writeFile(path.join(repo.root, 'src/beside.md'), 'b\n')],
      [
        'rename src/beside.md',
        () => rename(path.join(repo.root, 'src/beside.md'), path.join(repo.root, 'src/b2.md')),
      ],
      ['remove src/b2.md', () => rm(path.join(repo.root, 'src/b2.md'))],
      ['remove src/notes.md', () => rm(path.join(repo.root, 'src/notes.md'))],
      ['remove lib/never.md', () => rm(path.join(repo.root, 'lib/never.md'))],
    ];
    for (const [what, step] of scripted) {
      await step();
      expect(await answers(engine, asked()), what).toEqual(await fresh(repo.root, asked()));
    }

    const next = seededRandom(35);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const present = new Set(
      Object.keys(files).filter(
        (file) => !file.startsWith('.notarai/') && !['src/notes.md', 'lib/never.md'].includes(file),
      ),
    );
    let counter = 0;
    const absolute = (file: string) => path.join(repo.root, file);
    let edits = 0;
    let editsClassifiedAlone = 0;
    for (let step = 0; step < 60; step++) {
      const roll = next();
      const file = pick([...present]);
      let what: string;
      let editOf: string | undefined;
      if (roll < 0.3 && file) {
        what = `edit ${file}`;
        editOf = file;
        await writeFile(absolute(file), `edited ${++counter}\n`);
      } else if (roll < 0.45) {
        const added = `${pick(DIRS)}/n${++counter}.${next() < 0.5 ? 'ts' : 'md'}`;
        what = `add ${added}`;
        await writeFile(absolute(added), `new ${counter}\n`);
        present.add(added);
      } else if (roll < 0.55 && file) {
        what = `delete ${file}`;
        await rm(absolute(file));
        present.delete(file);
      } else if (roll < 0.65 && file) {
        const to = `${pick(DIRS)}/r${++counter}.ts`;
        what = `rename ${file} -> ${to}`;
        await rename(absolute(file), absolute(to));
        present.delete(file);
        present.add(to);
      } else if (roll < 0.72) {
        const edited = pick([...specs]);
        // A quarter of the time without its intent: it parses, but is not a valid spec.
        const invalid = next() < 0.25;
        what = `spec ${edited} edited${invalid ? ' (no intent)' : ''}`;
        const text = spec(`E${++counter}`, pick(GLOBS));
        await writeFile(absolute(edited), invalid ? text.replace(/^intent: .*\n/m, '') : text);
      } else if (roll < 0.77) {
        const added = `.notarai/n${++counter}.spec.yaml`;
        what = `spec ${added} added`;
        await writeFile(absolute(added), spec(`N${counter}`, pick(GLOBS)));
        specs.add(added);
      } else if (roll < 0.81 && specs.size > 1) {
        const removed = pick([...specs]);
        what = `spec ${removed} removed`;
        await rm(absolute(removed));
        specs.delete(removed);
      } else if (roll < 0.85) {
        const from = pick([...specs]);
        const to = `.notarai/m${++counter}.spec.yaml`;
        what = `spec ${from} renamed to ${to}`;
        await rename(absolute(from), absolute(to));
        specs.delete(from);
        specs.add(to);
      } else if (roll < 0.95) {
        const marked = [...present, ...specs].filter(() => next() < 0.5);
        what = `mark ${marked.length} files`;
        await engine.markReconciled(marked);
      } else {
        what = 'snapshot_state';
        await engine.snapshotState();
        const state = await readFile(absolute('.notarai/reconciliation_state.json'), 'utf8');
        expect(JSON.parse(state)).toHaveProperty('file_fingerprints');
      }
      steps.push(what);
      const before = engine.classifiedPaths;
      const live = await answers(engine, asked());
      const classified = engine.classifiedPaths - before;
      expect(live, `step ${step}: ${what} (after ${steps.slice(-4, -1).join('; ')})`).toEqual(
        await fresh(repo.root, asked()),
      );
      if (editOf !== undefined) {
        // The window's recomputation may have taken the edit first: then nothing is left to do.
        edits++;
        if (classified <= 2) editsClassifiedAlone++;
      }
    }
    // Edits that the index applied were classified alone (a drop, e.g. git refreshing its own
    // index's stat data, may make one classify everything again).
    expect(edits).toBeGreaterThan(5);
    expect(editsClassifiedAlone).toBeGreaterThan(edits / 2);
  }, 600_000);

  it('a warm call classifies no path; an edit classifies the file alone', async () => {
    const repo = await makeTempRepo({
      '.notarai/system.spec.yaml': SYSTEM,
      '.notarai/s0.spec.yaml': spec('S0', 'src/**'),
      'README.md': '# app\n',
      'src/a.ts': 'a\n',
      'src/b.ts': 'b\n',
      'src/c.ts': 'c\n',
    });
    cleanups.push(() => repo.cleanup());
    await git(repo.root, 'checkout', '-q', '-b', 'feature');
    const engine = new ReconcileEngine({ root: repo.root });
    cleanups.push(() => engine.close());
    const watcher = new ReconcileWatcher({ engine, base: 'main', onState: () => undefined });
    cleanups.push(() => watcher.close());
    await watcher.start();
    await engine.markReconciled(['README.md', 'src/a.ts', 'src/b.ts', '.notarai/s0.spec.yaml']);
    const specs = ['.notarai/system.spec.yaml', '.notarai/s0.spec.yaml'];
    const first = await toolAnswers(engine, specs);
    const before = engine.classifiedPaths;
    expect(await toolAnswers(engine, specs)).toEqual(first);
    expect(engine.classifiedPaths - before).toBe(0);
    // An edit: that file alone, once per rule (the window's recomputation may take it first).
    await writeFile(path.join(repo.root, 'src/a.ts'), 'edited\n');
    const afterEdit = engine.classifiedPaths;
    const edited = await toolAnswers(engine, specs);
    expect(engine.classifiedPaths - afterEdit).toBeLessThanOrEqual(2);
    expect(edited).toEqual((await fresh(repo.root, specs)).tools);
    const s0 = edited.bySpec['.notarai/s0.spec.yaml'] as { artifacts: { value: unknown } };
    expect(s0.artifacts.value).toEqual({
      changed_artifacts: ['src/a.ts', 'src/c.ts'],
      spec_invalidated: [],
    });
    // Without a live index, every call classifies all its files (the counter counts them too).
    const unwatched = new ReconcileEngine({ root: repo.root });
    cleanups.push(() => unwatched.close());
    await unwatched.getChangedArtifacts({ spec_path: '.notarai/s0.spec.yaml' });
    expect(unwatched.classifiedPaths).toBe(4); // src/a.ts, src/b.ts, src/c.ts and the spec
  });
});
