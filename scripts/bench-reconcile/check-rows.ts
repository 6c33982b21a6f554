// Issue 25's and issue 35's rows through a served worktree: check_specs cold, after a write and
// warm against `git ls-files`, the window's update, the CPU per edit, and their report.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Host } from '../../main/host/host.ts';
import type { Client } from '@modelcontextprotocol/client';
import {
  CHANGES_PER_BATCH,
  fmt,
  gitLsFiles,
  idle,
  median,
  medianOf,
  medianOfRuns,
  processCpuMs,
  time,
} from './bench-repo.ts';
import { type CliRow } from './cli-rows.ts';
import { type MarkFigures } from './mark-rows.ts';
import { callOk, lastWarnings, nextState } from './served-client.ts';

export interface SizeResult {
  size: number;
  generateMs: number;
  /** `grove check` / `grove score` as commands (and NotarAI's, with --notarai). */
  cli?: CliRow[];
  gitDiffMs: number;
  b3sumMs: number;
  floorMs: number;
  list: number;
  cold: number;
  warm: number;
  bypass: number;
  changedArtifacts: number;
  mark: number;
  coldJsonMs: number;
  coldJsonBytes: number;
  checks: { files: number; diffFiles: number };
  /** The same calls through a real MCP client (modern Streamable HTTP) of a real worktree process. */
  mcp: {
    list: number;
    cold: number;
    /** The cold answer was over the MCP answer cap (refused after the work). */
    coldTooBig: boolean;
    warm: number;
    mark: MarkFigures;
    markChanged: MarkFigures;
  };
  /**
   * Issue 25: `git ls-files` (tracked + untracked), and check_specs through the client: cold (the
   * live index cannot vouch: a .gitignore was written), after one file written (the index applies
   * it), warm; and the window's update: from writing a file to the reconcile-state event carrying
   * the check that counts it.
   */
  check: {
    lsFiles: number;
    cold: number;
    afterWrite: number;
    warm: number;
    findings: number;
    updateNewFile: number;
    updateEdit: number;
    /** Warm get_drift_score, nothing changed (interleaved with the warm check_specs runs). */
    warmScore: number;
    /** Medians of the per-run ratios to the `git ls-files` run beside each (interleaved). */
    warmRatio: number;
    warmScoreRatio: number;
    /**
     * CPU of the worktree process (utime + stime from /proc, its threads included, its children
     * not) from writing one file until the window's state shows it and the process is idle.
     */
    editCpu: number;
    newFileCpu: number;
  };
}

type CheckContent = { summary: { warnings: number }; findings: { type: string }[] };

/** Issue 25's rows through a served worktree (see SizeResult.check). */
export async function benchCheck(
  root: string,
  served: { client: Client; host: Host; settled(since: number): Promise<void> },
  governed: readonly string[],
  runs: number,
): Promise<SizeResult['check']> {
  const spec = '.notarai/product.spec.yaml';
  await callOk(served.client, 'mark_reconciled', { files: [...governed, spec] });
  // The floor is measured with the worktree process idle: the mark's write starts the window's
  // recomputation, which would otherwise run beside `git ls-files` and inflate the floor.
  await served.settled(performance.now());
  await gitLsFiles(root);
  const lsFiles = await median(runs, () => gitLsFiles(root));
  // Cold: the live index cannot vouch (a .gitignore changed), so git lists, specs load and
  // every governed file is compared with the cache (the stat fast path) again.
  let ignoreVersion = 0;
  const cold = await median(runs, async () => {
    await writeFile(path.join(root, '.gitignore'), `# ${++ignoreVersion}\n*.log\n`);
    await callOk(served.client, 'check_specs', {});
  });
  // One file written: the index applies that path only. Measured once the worktree process is
  // idle: the window's full recomputation after the cold rows' last .gitignore write (seconds at
  // 200,000 files) is not this row's.
  const pid = served.host.processId(served.host.snapshot().repos[0]!.worktrees[0]!.id);
  if (pid === undefined) throw new Error('no worktree process');
  await idle(pid);
  const afterWrite = await median(runs, async () => {
    await writeFile(path.join(root, 'scratch.txt'), `${performance.now()}\n`);
    await callOk(served.client, 'check_specs', {});
  });
  const checked = await callOk(served.client, 'check_specs', {});
  const warm = await median(runs, () => callOk(served.client, 'check_specs', {}));
  const content = async () =>
    (await callOk(served.client, 'check_specs', {})).structuredContent as CheckContent;
  // The window's update after one file change: from the write to the reconcile-state event
  // whose check counts it (a new file no spec governs is one more coverage gap).
  let added = 0;
  process.stdout.write('[window: new file] ');
  const updateNewFile = await medianOfRuns(runs, async () => {
    const before = (await content()).summary.warnings;
    const seen = nextState(served.host, (state) => state.check?.warnings === before + 1);
    const started = performance.now();
    await writeFile(path.join(root, `uncovered-${process.pid}-${++added}.txt`), 'new\n');
    return (await seen) - started;
  });
  // An edit of a governed, reconciled file: one more file changed since reconciliation.
  let edits = 0;
  process.stdout.write('[window: edit] ');
  const updateEdit = await medianOfRuns(runs, async () => {
    await content();
    const before = served.host.snapshot().repos[0]?.worktrees[0]?.reconcileTotals;
    const changed = before?.changedSinceReconciled ?? 0;
    const seen = nextState(
      served.host,
      (state) => state.totals.changedSinceReconciled === changed + 1,
    );
    const started = performance.now();
    await writeFile(
      path.join(root, `src/d1/f${++edits}.ts`),
      `// edited ${edits} at ${performance.now()}\n`,
    );
    return (await seen) - started;
  });
  // Warm, interleaved: git ls-files, check_specs, get_drift_score, in turn (a slow spell of the
  // shared machine hits all three); the ratios are taken run by run.
  process.stdout.write('[warm] ');
  const warmRuns: { ls: number; check: number; score: number }[] = [];
  await callOk(served.client, 'get_drift_score', {});
  for (let run = 0; run < Math.max(runs, 5); run++) {
    const ls = (await time(() => gitLsFiles(root))).ms;
    const check = (await time(() => callOk(served.client, 'check_specs', {}))).ms;
    const score = (await time(() => callOk(served.client, 'get_drift_score', {}))).ms;
    warmRuns.push({ ls, check, score });
  }
  // CPU of the worktree process per change, once it is idle (the idle memory reclaim, 5 s after
  // the last request, is waited out first: it is not the change's).
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  const cpuOf = async (changes: () => Promise<void>) => {
    await idle(pid);
    const before = processCpuMs(pid);
    await changes();
    await idle(pid);
    return processCpuMs(pid) - before;
  };
  process.stdout.write('[cpu]\n');
  // /proc counts in clock ticks (10 ms): each figure is the CPU of a batch of CHANGES_PER_BATCH
  // changes, one after the other (each waits for its state), divided by the batch's size.
  const cpuEdits: number[] = [];
  const cpuNewFiles: number[] = [];
  for (let run = 0; run < Math.max(runs, 3); run++) {
    cpuEdits.push(
      (await cpuOf(async () => {
        for (let change = 0; change < CHANGES_PER_BATCH; change++) {
          const changed =
            served.host.snapshot().repos[0]?.worktrees[0]?.reconcileTotals
              ?.changedSinceReconciled ?? 0;
          const file = `src/d2/f${++edits}.ts`;
          const seen = nextState(
            served.host,
            (state) => state.totals.changedSinceReconciled === changed + 1,
          );
          await writeFile(path.join(root, file), `// edited ${edits} at ${performance.now()}\n`);
          await seen;
        }
      })) / CHANGES_PER_BATCH,
    );
    cpuNewFiles.push(
      (await cpuOf(async () => {
        for (let change = 0; change < CHANGES_PER_BATCH; change++) {
          const warnings = lastWarnings(served.host);
          const seen = nextState(served.host, (state) => (state.check?.warnings ?? 0) > warnings);
          await writeFile(path.join(root, `uncovered-${process.pid}-${++added}.txt`), 'new\n');
          await seen;
        }
      })) / CHANGES_PER_BATCH,
    );
  }
  return {
    lsFiles,
    cold,
    afterWrite,
    warm,
    findings: (checked.structuredContent as CheckContent).findings.length,
    updateNewFile,
    updateEdit,
    warmScore: medianOf(warmRuns.map((run) => run.score)),
    warmRatio: medianOf(warmRuns.map((run) => run.check / run.ls)),
    warmScoreRatio: medianOf(warmRuns.map((run) => run.score / run.ls)),
    editCpu: medianOf(cpuEdits),
    newFileCpu: medianOf(cpuNewFiles),
  };
}

export const verdict = (ratio: number, target: number) =>
  `${ratio.toFixed(2)}x (target <= ${target}x: ${ratio <= target ? 'met' : 'MISSED'})`;

/** Issue 25's rows: check_specs as ratios to `git ls-files`, and the window's update. */
export function reportCheck(results: SizeResult[]): void {
  console.log('\ncheck_specs through the MCP client (issue 25), as ratios to `git ls-files`:');
  console.log(
    '\n| files | git ls-files | check_specs cold (x) | after one file written (x) | warm (x) | findings | window update: new file | window update: edit |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const x = (ms: number) => `${fmt(ms)} (${(ms / r.check.lsFiles).toFixed(2)}x)`;
    console.log(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.check.lsFiles)} | ${x(r.check.cold)} | ${x(r.check.afterWrite)} | ${x(r.check.warm)} | ${r.check.findings} | ${fmt(r.check.updateNewFile)} | ${fmt(r.check.updateEdit)} |`,
    );
  }
  console.log(
    '\nIssue 35 (warm: medians of per-run ratios, git ls-files / check_specs / get_drift_score interleaved; CPU: the worktree process, /proc utime+stime, from the write until the window shows it and the process is idle):',
  );
  console.log(
    '\n| files | warm check_specs (x ls-files) | warm get_drift_score (x ls-files) | CPU per edited governed file | CPU per new untracked file |',
  );
  console.log('|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.check.warm)} (${r.check.warmRatio.toFixed(2)}x) | ${fmt(r.check.warmScore)} (${r.check.warmScoreRatio.toFixed(2)}x) | ${fmt(r.check.editCpu)} | ${fmt(r.check.newFileCpu)} |`,
    );
  }
  console.log(
    '\nThe CLI, a new process per run (interleaved with NotarAI when --notarai is given):',
  );
  console.log(
    '\n| files | command | grove | NotarAI 0.7 | grove / NotarAI (median of per-run ratios) |',
  );
  console.log('|---:|---|---:|---:|---:|');
  for (const r of results) {
    for (const row of r.cli ?? []) {
      console.log(
        `| ${r.size.toLocaleString('en-US')} | ${row.name} | ${fmt(row.grove)} | ${row.notarai === undefined ? '-' : fmt(row.notarai)} | ${row.ratio === undefined ? '-' : `${row.ratio.toFixed(2)}x`} |`,
      );
    }
  }
  for (const r of results) {
    const within = (ms: number) => `${fmt(ms)} (target <= 1 s: ${ms <= 1000 ? 'met' : 'MISSED'})`;
    console.log(
      `  ${r.size}: check_specs cold ${verdict(r.check.cold / r.check.lsFiles, 6)}; ` +
        `after a write ${verdict(r.check.afterWrite / r.check.lsFiles, 2)}; ` +
        `warm ${verdict(r.check.warmRatio, 2)}; get_drift_score warm ${verdict(r.check.warmScoreRatio, 2)}; ` +
        `window update after one file change: new file ${within(r.check.updateNewFile)}, ` +
        `edit ${within(r.check.updateEdit)}; CPU per edit ${fmt(r.check.editCpu)} (target <= 50 ms at ` +
        `100,000 files and above: ${r.size < 100_000 ? 'n/a' : r.check.editCpu <= 50 ? 'met' : 'MISSED'})`,
    );
  }
  const small = results.find((r) => r.size === 20_000);
  const big = results.find((r) => r.size === 200_000);
  if (small && big) {
    const keys = [
      'lsFiles',
      'cold',
      'afterWrite',
      'warm',
      'warmScore',
      'updateNewFile',
      'updateEdit',
      'editCpu',
      'newFileCpu',
    ] as const;
    for (const key of keys) {
      const ratio = big.check[key] / small.check[key];
      console.log(
        `  200k/20k ${key}: ${ratio.toFixed(1)}x (linear: <= 12x: ${ratio <= 12 ? 'met' : 'MISSED'})`,
      );
    }
  }
}
