// bench:attacks — what one hostile or unlucky client or repository costs everyone else. A real
// worktree process (Host, as the app runs it) serves a repository; an observer client calls
// read_file every 20 ms over Streamable HTTP while an attacker runs each attack below through its
// own real MCP client. For each attack it prints what the attacker got (and how long it took), the
// worst and median read_file latency the observer saw meanwhile, and whether the server process
// was restarted. Figures, not a timed test: results go to docs/performance.md.
//
//   node scripts/bench-attacks.ts [--json]      (GROVE_ATTACK=<part of a name> runs only that one)
import { execFile } from 'node:child_process';
import { mkdir, rm, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/client';
import { Host } from '../main/host/host.ts';
import { connectClient } from '../main/testing/mcp-clients.ts';
import { lockSqliteFromAnotherProcess } from '../main/testing/event-loop.ts';
import { randomFirstPort } from '../main/testing/net.ts';
import { git, makeTempDir, makeTempRepo } from '../main/testing/temp-repo.ts';
import { buildWorktreeBundle } from './build-worktree.ts';

const FILE = 'notes.txt';
const CONTENT = 'hello from the worktree\n';
const LONG_NAME = `${'a'.repeat(60)}.txt`;

const SPEC = `schema_version: '0.7'
intent: The app.
artifacts:
  code:
    - path: src/**
    - path: big/**
behaviors:
  - name: runs
    given: anything
    then: works
`;

/** A committed spec whose artifact glob backtracks catastrophically in a regex engine. */
const CATASTROPHIC_SPEC = `schema_version: '0.7'
intent: Hostile.
artifacts:
  code:
    - path: "**/${'*a'.repeat(12)}*b"
behaviors:
  - name: hangs
    given: a regex engine
    then: it backtracks
`;

interface AttackFigures {
  attack: string;
  attacker: string;
  attackerMs: number;
  observerCalls: number;
  observerWorstMs: number;
  observerMedianMs: number;
  observerFailures: number;
  restarted: boolean;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Calls read_file every 20 ms until stopped; latencies of each call. */
function observe(client: Client): { stop(): Promise<{ latencies: number[]; failures: number }> } {
  let running = true;
  const latencies: number[] = [];
  let failures = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const result = await client.callTool(
          { name: 'read_file', arguments: { path: FILE } },
          { timeout: 120_000 },
        );
        if (result.isError) failures++;
      } catch {
        failures++;
      }
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { latencies, failures };
    },
  };
}

function describeResult(result: unknown): string {
  const value = result as { isError?: boolean; content?: { type: string; text?: string }[] };
  const text = value.content?.[0]?.text ?? '';
  return value.isError ? `error: ${text.slice(0, 110)}` : `ok (${text.length} bytes)`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
  await buildWorktreeBundle();
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const repo = await makeTempRepo({
      [FILE]: CONTENT,
      'src/a.ts': 'export const a = 1;\n',
      'src/slow.txt': `${'a'.repeat(40)}b\n`,
      [`src/${LONG_NAME}`]: 'long name\n',
      '.notarai/app.spec.yaml': SPEC,
    });
    cleanups.push(repo.cleanup);
    // A 512 MB governed file (sparse), committed as an untracked-but-not-ignored file.
    await mkdir(path.join(repo.root, 'big'));
    await writeFile(path.join(repo.root, 'big/huge.bin'), '');
    await truncate(path.join(repo.root, 'big/huge.bin'), 512 * 1024 * 1024);
    await git(repo.root, 'checkout', '-q', '-b', 'feature');
    await writeFile(path.join(repo.root, 'src/a.ts'), 'export const a = 2;\n');
    await writeFile(path.join(repo.root, `src/${LONG_NAME}`), 'long name, changed\n');

    const dataDir = await makeTempDir('grove-bench-data-');
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const host = await Host.open({ dataDir, firstPort: randomFirstPort(), worktreePollMs: 0 });
    cleanups.push(() => host.close());
    const added = await host.addRepo(repo.root);
    const id = added.worktrees[0]!.id;
    await host.startServer(id);
    const { token, urls } = host.getConnectionInfo(id);
    const port = Number(new URL(urls.sse).port);
    const connect = async () => {
      const { client } = await connectClient(port, 'modern-http', token);
      cleanups.push(() => client.close());
      return client;
    };
    const observer = await connect();
    const attacker = await connect();
    const second = await connect();
    const call = (client: Client, name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }, { timeout: 300_000 });
    // A cache to lock.
    await call(attacker, 'mark_reconciled', { files: ['src/a.ts'] });

    const only = process.env['GROVE_ATTACK'];
    const attacks: { name: string; run(): Promise<string> }[] = [
      {
        name: 'cache locked by another process for 5 s: get_spec_diff + mark_reconciled',
        async run() {
          const lock = await lockSqliteFromAnotherProcess(
            path.join(repo.root, '.notarai/.cache/notarai.db'),
            5_000,
          );
          const [diff, mark] = await Promise.all([
            call(attacker, 'get_spec_diff', {
              spec_path: '.notarai/app.spec.yaml',
              base_branch: 'main',
            }),
            call(second, 'mark_reconciled', { files: ['src/a.ts'] }),
          ]);
          await lock.exited;
          return `get_spec_diff ${describeResult(diff)}; mark_reconciled ${describeResult(mark)}`;
        },
      },
      {
        name: 'mark_reconciled of a 512 MB file',
        async run() {
          return describeResult(
            await call(attacker, 'mark_reconciled', { files: ['big/huge.bin'] }),
          );
        },
      },
      {
        name: 'two grep calls with a catastrophic regex, (a+)+$',
        async run() {
          const results = await Promise.all([
            call(attacker, 'grep', { pattern: '(a+)+$', path: 'src/slow.txt' }),
            call(second, 'grep', { pattern: '(a+)+$', path: 'src/slow.txt' }),
          ]);
          return results.map(describeResult).join('; ');
        },
      },
      {
        name: 'search_files with a catastrophic glob',
        async run() {
          return describeResult(
            await call(attacker, 'search_files', { patterns: [`**/${'*a'.repeat(12)}*b`] }),
          );
        },
      },
      {
        name: 'committed spec with a catastrophic artifact glob: list_affected_specs',
        async run() {
          await writeFile(path.join(repo.root, '.notarai/hostile.spec.yaml'), CATASTROPHIC_SPEC);
          try {
            return describeResult(
              await call(attacker, 'list_affected_specs', { base_branch: 'main' }),
            );
          } finally {
            await rm(path.join(repo.root, '.notarai/hostile.spec.yaml'), { force: true });
          }
        },
      },
      {
        name: 'a FIFO where a spec is expected: list_affected_specs',
        async run() {
          const fifo = path.join(repo.root, '.notarai/fifo.spec.yaml');
          await promisify(execFile)('mkfifo', [fifo]);
          try {
            return describeResult(
              await call(attacker, 'list_affected_specs', { base_branch: 'main' }),
            );
          } finally {
            await rm(fifo, { force: true });
          }
        },
      },
    ];

    const figures: AttackFigures[] = [];
    for (const attack of attacks.filter((candidate) => !only || candidate.name.includes(only))) {
      const pidBefore = host.processId(id);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const watching = observe(observer);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = performance.now();
      let outcome: string;
      try {
        outcome = await attack.run();
      } catch (error) {
        outcome = `threw: ${String(error).slice(0, 110)}`;
      }
      const attackerMs = performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 200));
      const { latencies, failures } = await watching.stop();
      figures.push({
        attack: attack.name,
        attacker: outcome,
        attackerMs,
        observerCalls: latencies.length,
        observerWorstMs: Math.max(...latencies),
        observerMedianMs: median(latencies),
        observerFailures: failures,
        restarted: host.processId(id) !== pidBefore,
      });
    }

    if (values.json) {
      console.log(JSON.stringify(figures, null, 2));
      return;
    }
    console.log(
      '| attack | attacker got | attacker time | observer read_file: calls, worst, median, failures | server restarted |',
    );
    console.log('|---|---|---:|---|---|');
    for (const row of figures) {
      console.log(
        `| ${row.attack} | ${row.attacker.replaceAll('|', '\\|')} | ${(row.attackerMs / 1000).toFixed(1)} s | ` +
          `${row.observerCalls}, ${row.observerWorstMs.toFixed(0)} ms, ${row.observerMedianMs.toFixed(1)} ms, ` +
          `${row.observerFailures} | ${row.restarted ? 'yes' : 'no'} |`,
      );
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

await main();
