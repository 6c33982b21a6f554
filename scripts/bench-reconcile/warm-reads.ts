// `--warm-reads`: warm get_spec_diff, get_changed_artifacts and export_context through the client,
// each beside a `git ls-files`, and the worktree process's CPU per call.
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { type Options } from './bench-options.ts';
import {
  fileName,
  fmt,
  generate,
  gitLsFiles,
  idle,
  medianOf,
  processCpuMs,
  time,
} from './bench-repo.ts';
import { callOk, mcpClientOf, stagesFile } from './served-client.ts';

/**
 * --warm-reads (issue 35): get_spec_diff, get_changed_artifacts and export_context through a real
 * client with nothing changed since the last call, each run beside a `git ls-files` (interleaved,
 * ratios per run), and the worktree process's CPU per call (/proc, a batch of calls once idle).
 */
export async function benchWarmReads(size: number, options: Options): Promise<void> {
  const reused = options.repo === undefined ? undefined : path.resolve(options.repo);
  const generated = reused === undefined ? await generate(size) : undefined;
  const root = reused ?? generated!.root;
  const dir = path.dirname(root);
  const dataDir = path.join(dir, `data-${process.pid}`);
  const spec = '.notarai/product.spec.yaml';
  console.log(`\n== ${size.toLocaleString('en-US')} governed files, warm reads (${root})`);
  const served = await mcpClientOf(root, dataDir);
  try {
    const pid = served.host.processId(served.host.snapshot().repos[0]!.worktrees[0]!.id);
    if (pid === undefined) throw new Error('no worktree process');
    const files = Array.from({ length: size }, (_, index) => fileName(index));
    await callOk(served.client, 'mark_reconciled', { files: [...files, spec] });
    await served.settled(performance.now());
    const calls: [string, () => Promise<unknown>][] = [
      [
        'get_spec_diff',
        () => callOk(served.client, 'get_spec_diff', { spec_path: spec, base_branch: 'main' }),
      ],
      [
        'get_changed_artifacts',
        () => callOk(served.client, 'get_changed_artifacts', { spec_path: spec }),
      ],
      [
        'export_context',
        () => callOk(served.client, 'export_context', { base_branch: 'main', spec_path: spec }),
      ],
      [
        'export_context (all)',
        () => callOk(served.client, 'export_context', { base_branch: 'main' }),
      ],
    ];
    for (const [, call] of calls) await call();
    const walls = new Map<string, number[]>(calls.map(([name]) => [name, []]));
    const ratios = new Map<string, number[]>(calls.map(([name]) => [name, []]));
    const ls: number[] = [];
    for (let run = 0; run < Math.max(options.runs, 5); run++) {
      const floor = (await time(() => gitLsFiles(root))).ms;
      ls.push(floor);
      for (const [name, call] of calls) {
        const ms = (await time(call)).ms;
        walls.get(name)!.push(ms);
        ratios.get(name)!.push(ms / floor);
      }
    }
    const perBatch = 10;
    const cpu = new Map<string, number[]>(calls.map(([name]) => [name, []]));
    for (let run = 0; run < 3; run++) {
      for (const [name, call] of calls) {
        await idle(pid);
        const before = processCpuMs(pid);
        for (let index = 0; index < perBatch; index++) await call();
        await idle(pid);
        cpu.get(name)!.push((processCpuMs(pid) - before) / perBatch);
      }
    }
    const load = loadavg()
      .map((value) => value.toFixed(1))
      .join(' ');
    console.log(`git ls-files: median ${fmt(medianOf(ls))}; load average ${load} at the end`);
    console.log(
      '| call (warm, nothing changed) | wall, median | x git ls-files (per run) | worktree process CPU per call (median of 3 batches of 10) |',
    );
    console.log('|---|---|---|---|');
    for (const [name] of calls) {
      console.log(
        `| ${name} | ${fmt(medianOf(walls.get(name)!))} | ${medianOf(ratios.get(name)!).toFixed(2)}x | ${medianOf(cpu.get(name)!).toFixed(1)} ms |`,
      );
    }
  } finally {
    await served.close();
    await rm(dataDir, { recursive: true, force: true });
    await rm(stagesFile(dataDir), { force: true });
    if (generated && !options.keep) await rm(dir, { recursive: true, force: true });
  }
}
