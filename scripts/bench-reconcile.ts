// Benchmark of the reconciliation engine (`npm run bench:reconcile`): a script that prints
// figures, not a timed test. For each size (20,000 and 200,000 governed files by default) it
// generates a git repository in a temp directory (1% of the governed files changed vs the base:
// half committed on a feature branch, half modified in the working tree), measures the floor
// (`git diff --name-only base` plus `b3sum` over every governed file) and the engine's
// operations, and checks the targets of issue 3. Its parts are in scripts/bench-reconcile/ (the
// options, the repositories and floors, the served client, the check, CLI, mark and warm-read
// rows). Usage:
//   npm run bench:reconcile [-- --sizes 20000,200000 --runs 3 --big-runs 1 --keep --check-only]
// `--check-only` measures only issue 25's rows (check_specs, the window's update after a change);
// with `--repo DIR` (one size) it reuses a repository generated with --keep. It also prints issue
// 35's figures: warm check_specs and get_drift_score against `git ls-files` (interleaved, ratios
// per run), the worktree process's CPU per edited or new file (/proc), and the CLI rows (`grove
// check` / `grove score` as new processes); `--notarai PATH` (a NotarAI 0.7 binary) runs NotarAI's
// same commands interleaved with Grove's and prints the ratios.
//   npm run bench:reconcile -- --mark-only [--sizes 20000 --runs 7 --repo DIR]
// --mark-only measures mark_reconciled through the client only (cold and after a write), each
// mark right after a `b3sum` of the same files (ratios taken pair by pair: the machine's load
// moves both), with the stages of each mark in the worktree process (GROVE_STAGE_TIMINGS,
// main/platform/stage-timings.ts). --repo reuses a repository generated with --keep.
//   npm run bench:reconcile -- --warm-reads [--sizes 20000 --runs 5 --repo DIR]
// --warm-reads: warm get_spec_diff, get_changed_artifacts and export_context through the client,
// each beside a `git ls-files`, and the worktree process's CPU per call (benchWarmReads).
import { rm } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { stableStringify } from '../main/mcp/stable-json.ts';
import { ReconcileEngine } from '../main/reconcile/reconcile-engine.ts';
import { type Options, parseOptions } from './bench-reconcile/bench-options.ts';
import {
  b3sumAll,
  fileName,
  fmt,
  generate,
  gitDiffNames,
  median,
  time,
} from './bench-reconcile/bench-repo.ts';
import { type SizeResult, benchCheck, reportCheck, verdict } from './bench-reconcile/check-rows.ts';
import { benchCli } from './bench-reconcile/cli-rows.ts';
import {
  benchMarkOnly,
  markCell,
  markRatio,
  markRuns,
  printMarkFigures,
} from './bench-reconcile/mark-rows.ts';
import {
  callDoneOrTooBig,
  callOk,
  mcpClientOf,
  stagesFile,
} from './bench-reconcile/served-client.ts';
import { benchWarmReads } from './bench-reconcile/warm-reads.ts';

async function benchSize(size: number, options: Options): Promise<SizeResult> {
  process.stdout.write(`\n== ${size.toLocaleString('en-US')} governed files: generating... `);
  // --check-only --repo DIR: a repository generated before with --keep (its size given by --sizes).
  const reused = options.checkOnly ? options.repo : undefined;
  const generated = await time(async () =>
    reused === undefined
      ? generate(size)
      : {
          dir: path.dirname(path.resolve(reused)),
          root: path.resolve(reused),
          governed: Array.from({ length: size }, (_, index) => fileName(index)),
        },
  );
  const { dir, root, governed } = generated.value;
  console.log(`${fmt(generated.ms)} (${root})`);
  const spec = '.notarai/product.spec.yaml';
  const engine = new ReconcileEngine({ root });
  const runs = size > 50_000 ? options.bigRuns : options.runs;
  try {
    if (options.checkOnly) {
      engine.close();
      const dataDir = path.join(dir, `data-${process.pid}`);
      const served = await mcpClientOf(root, dataDir);
      let check: SizeResult['check'];
      try {
        check = await benchCheck(root, served, governed, runs);
      } finally {
        await served.close();
        await rm(dataDir, { recursive: true, force: true });
      }
      // The CLI rows once the worktree process is gone (nothing else runs in the worktree).
      const cli = await benchCli(root, Math.max(runs, 5), options.notarai);
      return { size, generateMs: generated.ms, check, cli } as SizeResult;
    }
    // Warm the page cache and git's index once, so floor and engine read the same warm disk.
    await gitDiffNames(root);
    await b3sumAll(root, governed);

    const gitDiffMs = await median(runs, () => gitDiffNames(root));
    const b3sumMs = await median(runs, () => b3sumAll(root, governed));
    const floorMs = gitDiffMs + b3sumMs;
    console.log(
      `floor: git diff --name-only ${fmt(gitDiffMs)} + b3sum ${fmt(b3sumMs)} = ${fmt(floorMs)}`,
    );

    const list = await median(runs, () => engine.listAffectedSpecs('main'));
    const cold = await median(runs, async () => {
      await engine.clearCache();
      await engine.getSpecDiff({ spec_path: spec, base_branch: 'main' });
    });
    await engine.clearCache();
    const coldResult = await engine.getSpecDiff({ spec_path: spec, base_branch: 'main' });
    const json = await time(async () => stableStringify(coldResult));
    const mark = await median(runs, async () => {
      await engine.clearCache();
      await engine.markReconciled([...governed, spec]);
    });
    // Nothing changed since mark_reconciled: the stat fast path answers for every file.
    const warmResult = await engine.getSpecDiff({ spec_path: spec, base_branch: 'main' });
    const warm = await median(runs, () =>
      engine.getSpecDiff({ spec_path: spec, base_branch: 'main' }),
    );
    const bypass = await median(runs, () =>
      engine.getSpecDiff({ spec_path: spec, base_branch: 'main', bypass_cache: true }),
    );
    const changedArtifacts = await median(runs, () =>
      engine.getChangedArtifacts({ spec_path: spec }),
    );
    if (warmResult.files.length !== 0) {
      throw new Error(`warm get_spec_diff listed ${warmResult.files.length} files, expected 0`);
    }
    const diffFiles = (coldResult.diff.match(/^diff --git /gm) ?? []).length;

    // The same calls as an agent makes them: a real SDK client, a real worktree process.
    engine.close();
    const served = await mcpClientOf(root, path.join(dir, 'data'));
    let mcp: SizeResult['mcp'];
    let check: SizeResult['check'];
    try {
      const args = { spec_path: spec, base_branch: 'main' };
      const mcpList = await median(runs, () =>
        callOk(served.client, 'list_affected_specs', { base_branch: 'main' }),
      );
      let coldTooBig = false;
      const mcpCold = await median(runs, async () => {
        await callOk(served.client, 'clear_cache', {});
        coldTooBig = (await callDoneOrTooBig(served.client, 'get_spec_diff', args)).tooBig;
      });
      const traces = stagesFile(path.join(dir, 'data'));
      const marked = [...governed, spec];
      const mcpMark = await markRuns(served, root, marked, runs, traces, false);
      await callOk(served.client, 'get_spec_diff', args);
      const mcpWarm = await median(runs, () => callOk(served.client, 'get_spec_diff', args));
      // The same mark once the live index vouches for nothing (.gitignore rewritten just before):
      // every file is read again, after the sync that tells so.
      const mcpMarkChanged = await markRuns(served, root, marked, runs, traces, true);
      check = await benchCheck(root, served, governed, runs);
      mcp = {
        list: mcpList,
        cold: mcpCold,
        coldTooBig,
        warm: mcpWarm,
        mark: mcpMark,
        markChanged: mcpMarkChanged,
      };
    } finally {
      await served.close();
    }
    // The CLI rows once the worktree process is gone, as with --check-only.
    const cli = await benchCli(root, Math.max(runs, 5), options.notarai);
    return {
      size,
      generateMs: generated.ms,
      cli,
      gitDiffMs,
      b3sumMs,
      floorMs,
      list,
      cold,
      warm,
      bypass,
      changedArtifacts,
      mark,
      coldJsonMs: json.ms,
      coldJsonBytes: json.value.length,
      checks: { files: coldResult.files.length, diffFiles },
      mcp,
      check,
    };
  } finally {
    engine.close();
    if (!options.keep && reused === undefined) {
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    }
  }
}

function report(results: SizeResult[], options: Options): void {
  if (options.checkOnly) {
    reportCheck(results);
    return;
  }
  console.log(
    '\n| governed files | floor (git diff + b3sum) | list_affected_specs | get_spec_diff cold | warm | bypass_cache | get_changed_artifacts | mark_reconciled |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.floorMs)} (${fmt(r.gitDiffMs)} + ${fmt(r.b3sumMs)}) | ${fmt(r.list)} | ${fmt(r.cold)} | ${fmt(r.warm)} | ${fmt(r.bypass)} | ${fmt(r.changedArtifacts)} | ${fmt(r.mark)} |`,
    );
  }
  console.log(
    '\nThrough a real MCP client (SDK client, modern Streamable HTTP, a real worktree process):',
  );
  console.log(
    '\n| governed files | floor | list_affected_specs (x git diff) | get_spec_diff cold (x floor) | warm (x floor) | mark_reconciled (x b3sum) | mark_reconciled, the live index vouching for nothing (x b3sum) |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const x = (ms: number, floor: number) => `${fmt(ms)} (${(ms / floor).toFixed(2)}x)`;
    console.log(
      `| ${r.size.toLocaleString('en-US')} | ${fmt(r.floorMs)} | ${x(r.mcp.list, r.gitDiffMs)} | ${x(r.mcp.cold, r.floorMs)}${r.mcp.coldTooBig ? ', answer over the 8 MiB cap: refused after the work' : ''} | ${x(r.mcp.warm, r.floorMs)} | ${markCell(r.mcp.mark)} | ${markCell(r.mcp.markChanged)} |`,
    );
  }
  console.log('\nTargets, through the MCP client (issue 19; in-process engine in brackets):');
  for (const r of results) {
    console.log(
      `  ${r.size}: get_spec_diff cold ${verdict(r.mcp.cold / r.floorMs, 3)} [${(r.cold / r.floorMs).toFixed(2)}x]; ` +
        `warm ${verdict(r.mcp.warm / r.floorMs, 0.5)} [${(r.warm / r.floorMs).toFixed(2)}x, no watcher]; ` +
        `list_affected_specs ${verdict(r.mcp.list / r.gitDiffMs, 1.5)} [${(r.list / r.gitDiffMs).toFixed(2)}x]; ` +
        `mark_reconciled ${verdict(markRatio(r.mcp.mark), 1.5)} [${(r.mark / r.b3sumMs).toFixed(2)}x], ` +
        `the live index vouching for nothing ${verdict(markRatio(r.mcp.markChanged), 1.5)}`,
    );
    console.log(
      `  ${r.size}: cold result ${r.checks.files} files, ${r.checks.diffFiles} file diffs, ` +
        `${(r.coldJsonBytes / 1024 / 1024).toFixed(1)} MiB of JSON (serialized in ${fmt(r.coldJsonMs)})`,
    );
  }
  reportCheck(results);
  for (const r of results) {
    printMarkFigures(`${r.size}: mark_reconciled cold`, r.mcp.mark);
    printMarkFigures(
      `${r.size}: mark_reconciled, the live index vouching for nothing`,
      r.mcp.markChanged,
    );
  }
  const small = results.find((r) => r.size === 20_000);
  const big = results.find((r) => r.size === 200_000);
  if (small && big) {
    for (const key of ['list', 'cold', 'warm', 'bypass', 'changedArtifacts', 'mark'] as const) {
      const ratio = big[key] / small[key];
      console.log(
        `  200k/20k ${key}: ${ratio.toFixed(1)}x (target <= 12x: ${ratio <= 12 ? 'met' : 'MISSED'})`,
      );
    }
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  console.log(
    `bench:reconcile on ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown cpu'}), ` +
      `node ${process.version}, tmp ${tmpdir()}, median of ${options.runs} runs per figure ` +
      `(${options.bigRuns} above 50,000 files), load average ${loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')}`,
  );
  if (options.markOnly) {
    for (const size of options.sizes) await benchMarkOnly(size, options);
    return;
  }
  if (options.warmReads) {
    for (const size of options.sizes) await benchWarmReads(size, options);
    return;
  }
  const results: SizeResult[] = [];
  for (const size of options.sizes) {
    results.push(await benchSize(size, options));
    reportCheck(results.slice(-1)); // as soon as measured: a later size may take long
  }
  report(results, options);
}

await main();
