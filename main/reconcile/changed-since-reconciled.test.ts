// One question, one answer (issue 34, "One truth"): "which governed files changed since they were
// reconciled?" The window (the Reconciliation tab's totals and rows, the Coverage tab's live check)
// answers by Grove's rule — this machine's hash cache, and for files it has no row for, the
// committed snapshot — and says what `grove check` reports by NotarAI's rule (the cache alone);
// `grove check --with-snapshot` and the tools' `with_snapshot` give Grove's rule to CI and agents.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, makeTempRepo, writeFiles } from '../testing/temp-repo.ts';
import { CACHE_DB } from './floor/hash-cache.ts';
import { runCheck } from './notarai07/notarai-check.ts';
import { scoreSpecs } from './notarai07/notarai-score.ts';
import { ReconcileEngine } from './reconcile-engine.ts';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const APP_SPEC = '.notarai/app.spec.yaml';
const APP = `schema_version: '0.8'
intent: The app.
tier: registered
artifacts:
  code:
    - path: src/**
`;

/**
 * A team's repository as a fresh clone sees it: a committed snapshot of src/a.ts, b.ts, c.ts and
 * the spec; this machine's cache then marks b.ts only; a.ts is edited after the snapshot.
 */
async function clonedWithSnapshot() {
  const repo = await makeTempRepo({
    [APP_SPEC]: APP,
    'src/a.ts': 'a\n',
    'src/b.ts': 'b\n',
    'src/c.ts': 'c\n',
  });
  cleanups.push(() => repo.cleanup());
  const root = repo.root;
  const team = new ReconcileEngine({ root });
  await team.markReconciled(['src/a.ts', 'src/b.ts', 'src/c.ts', APP_SPEC]);
  await team.snapshotState();
  team.close();
  await git(root, 'add', '.notarai/reconciliation_state.json');
  await git(root, 'commit', '-q', '-m', 'snapshot');
  await rm(path.join(root, CACHE_DB)); // this machine never marked anything
  await writeFiles(root, { 'src/a.ts': 'a, edited after the snapshot\n' });
  const engine = new ReconcileEngine({ root });
  cleanups.push(() => engine.close());
  return { root, engine };
}

const changedFindings = (report: { findings: { type: string; file_path: string | null }[] }) =>
  report.findings
    .filter((finding) => finding.type === 'changed_since_reconciliation')
    .map((finding) => finding.file_path);

describe('changed since reconciled: one rule in the window, NotarAI’s in grove check', () => {
  it('without a hash cache here: the window counts the snapshot; grove check, like NotarAI, nothing', async () => {
    const { root, engine } = await clonedWithSnapshot();
    const state = await engine.computeState('main');
    expect(state.totals.changedSinceReconciled).toBe(1);
    expect(state.check?.changedSinceReconciled).toBe(1);
    expect(state.check?.changedByCacheAlone).toBeNull();
    expect(changedFindings(state.check!)).toEqual(['src/a.ts']);
    expect(state.specs[0]?.driftReason).toBe(
      '1 file changed since the committed snapshot: src/a.ts',
    );

    expect(changedFindings(await runCheck(root))).toEqual([]);
    expect(changedFindings(await runCheck(root, { withSnapshot: true }))).toEqual(['src/a.ts']);
  });

  it('with a hash cache here: both tabs give the same count, and grove check’s differs by the snapshot', async () => {
    const { root, engine } = await clonedWithSnapshot();
    await engine.markReconciled(['src/b.ts']);
    await writeFiles(root, { 'src/b.ts': 'b, edited after the mark\n', 'src/d.ts': 'new\n' });

    const state = await engine.computeState('main');
    // a.ts: changed since the snapshot; b.ts: since this machine's mark; d.ts: never reconciled;
    // c.ts: as the snapshot fingerprinted it (Grove's rule), without a row (NotarAI's).
    expect(state.specs[0]?.changedSinceReconciledPaths).toEqual([
      'src/a.ts',
      'src/b.ts',
      'src/d.ts',
    ]);
    expect(state.totals.changedSinceReconciled).toBe(3);
    expect(state.check?.changedSinceReconciled).toBe(state.totals.changedSinceReconciled);
    expect(changedFindings(state.check!)).toEqual(['src/a.ts', 'src/b.ts', 'src/d.ts']);
    expect(state.check?.changedByCacheAlone).toBe(4);
    expect(state.specs[0]?.driftReason).toBe(
      '1 file never reconciled: src/d.ts; 1 file changed since marked on this machine: ' +
        'src/b.ts; 1 file changed since the committed snapshot: src/a.ts',
    );

    const notarai = await runCheck(root);
    expect(changedFindings(notarai)).toEqual(['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts']);
    expect(changedFindings(notarai)).toHaveLength(state.check!.changedByCacheAlone!);
    const grove = await runCheck(root, { withSnapshot: true });
    expect(changedFindings(grove)).toEqual(changedFindings(state.check!));
    // The score's changed share follows the same rule.
    const shareOf = async (withSnapshot: boolean) =>
      (await scoreSpecs(root, { withSnapshot })).specs[0]!.terms;
    expect(await shareOf(false)).not.toEqual(await shareOf(true));
  });

  it('says the spec was edited, and nothing when nothing changed', async () => {
    const { root, engine } = await clonedWithSnapshot();
    await writeFiles(root, { 'src/a.ts': 'a\n' }); // back to the snapshot's content
    expect((await engine.computeState('main')).specs[0]?.driftReason).toBeNull();
    await writeFiles(root, { [APP_SPEC]: `${APP}# edited\n` });
    expect((await engine.computeState('main')).specs[0]?.driftReason).toBe('spec edited');
  });
});
