// What every UI of the host hears about NotarAI 0.7's check: each `reconcile-state` event (the one
// `grove serve --json` prints and the window's SSE carries) and the HostApi snapshot hold the check
// summary (errors, warnings, the verdict, the first findings, coverage by folder) and the drift
// scores (overall and per spec), as the worktree process computed them. A real host, a real
// worktree process, a real repository with an orphaned glob and an uncovered file.
import { afterEach, expect, it } from 'vitest';
import type { HostEvent } from '../../shared/host-api.ts';
import type { ReconcileState } from '../../shared/reconcile.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { createLogger } from '../platform/log.ts';
import { Host } from './host.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// Line 6 is a glob matching no file: an orphaned glob, a critical error.
const SPEC = `schema_version: '0.8'
intent: The API.
tier: registered
artifacts:
  code:
    - path: lib/**
    - path: src/**
`;

it('reconcile-state events and the snapshot carry the check summary and the drift scores', async () => {
  const repo = await makeTempRepo({
    '.notarai/api.spec.yaml': SPEC,
    'src/a.ts': 'a\n',
    'README.md': '# readme\n',
  });
  cleanups.push(repo.cleanup);
  const host = await Host.open({
    dataDir: await makeTempDir(),
    firstPort: randomFirstPort(),
    worktreePollMs: 0,
    log: createLogger([]),
  });
  cleanups.push(() => host.close());
  const states: ReconcileState[] = [];
  host.onEvent((event: HostEvent) => {
    if (event.type === 'reconcile-state') states.push(event.state);
  });
  await host.addRepo(repo.root);
  await host.startAll();
  await waitFor(
    () => states.some((state) => state.check),
    'a reconcile-state with the check',
    30_000,
  );

  const state = states.find((candidate) => candidate.check)!;
  const check = state.check!;
  expect(check.errors).toBe(1);
  expect(check.passed).toBe(false);
  expect(check.warnings).toBeGreaterThanOrEqual(1);
  expect(check.findings).toContainEqual(
    expect.objectContaining({
      type: 'orphaned_glob',
      spec_path: '.notarai/api.spec.yaml',
      glob_pattern: 'lib/**',
      line: 6,
    }),
  );
  expect(check.findings).toContainEqual(
    expect.objectContaining({ type: 'coverage_gap', file_path: 'README.md' }),
  );
  expect(check.coverage).toMatchObject({ files: 2, governed: 1, truncated: false });
  expect(check.coverage.folders).toContainEqual({ path: 'src', files: 1, governed: 1 });
  expect(state.drift?.status).toMatch(/^(healthy|review|overdue)$/);
  expect(state.drift?.specs.map((spec) => spec.spec_path)).toEqual(['.notarai/api.spec.yaml']);
  // Each spec's row carries its score too (the Reconciliation table's Drift column).
  expect(state.specs[0]?.drift).toEqual({
    score: state.drift!.specs[0]!.score,
    status: state.drift!.specs[0]!.status,
  });

  // The snapshot a UI starts from holds the same.
  const [worktree] = host.snapshot().repos[0]!.worktrees;
  const snapshotState = host.snapshot().reconcile[worktree!.id]!;
  expect(snapshotState.check?.errors).toBe(states.at(-1)!.check!.errors);
  expect(snapshotState.drift?.status).toBe(states.at(-1)!.drift!.status);
});
