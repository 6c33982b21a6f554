// bench:attacks — what one hostile or unlucky client or repository costs everyone else. A real
// worktree process (Host, as the app runs it) serves a repository; an observer client calls
// read_file every 20 ms over Streamable HTTP while an attacker runs each attack below through its
// own real MCP client. For each attack it prints what the attacker got (and how long it took), the
// worst and median read_file latency the observer saw meanwhile, and whether the server process
// was restarted. Figures, not a timed test: results go to docs/performance.md.
//
// The last attacks are not hostile, only big: a second repository of --files files (100,000 by
// default, all governed by one spec), whose worktree server gets its own observer while a client
// runs each reconciliation tool over every file. Long loops there run in slices of the event loop
// (main/platform/time-slices.ts); the observer's worst latency shows what is left.
//
//   node scripts/bench-attacks.ts [--json] [--files N]
//   (GROVE_ATTACK=<part of a name> runs only that one; --files 0 skips the big repository)
import { execFile, fork } from 'node:child_process';
import { mkdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/client';
import { Host } from '../main/host/host.ts';
import { mapLimit } from '../main/platform/concurrency.ts';
import { connectClient } from '../main/testing/mcp-clients.ts';
import { lockSqliteFromAnotherProcess } from '../main/testing/event-loop.ts';
import { randomFirstPort } from '../main/testing/net.ts';
import { bigCommentSpecs, denseRefSpecs, nestedConfigs } from '../main/testing/hostile-specs.ts';
import { git, makeTempDir, makeTempRepo, writeFiles } from '../main/testing/temp-repo.ts';
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

/** A repository of `count` governed files (100 per directory) on a branch `feature` off `main`. */
async function makeBigRepo(count: number): Promise<{ root: string; files: string[] }> {
  const dir = await makeTempDir('grove-bench-big-');
  const root = path.join(dir, 'repo');
  const files = Array.from(
    { length: count },
    (_, index) => `src/d${Math.floor(index / 100)}/f${index % 100}.ts`,
  );
  await mkdir(root);
  await git(root, 'init', '-q', '-b', 'main');
  for (let d = 0; d < Math.ceil(count / 100); d++) {
    await mkdir(path.join(root, 'src', `d${d}`), { recursive: true });
  }
  await mapLimit(files, 64, (file, index) =>
    writeFile(path.join(root, file), `export const v${index} = ${index};\n`.repeat(20)),
  );
  await mkdir(path.join(root, '.notarai'));
  await writeFile(path.join(root, '.notarai/app.spec.yaml'), SPEC);
  await writeFile(path.join(root, FILE), CONTENT);
  await git(root, 'add', '-A');
  await git(root, 'commit', '-q', '-m', 'base');
  await git(root, 'checkout', '-q', '-b', 'feature');
  // 1% changed on the branch: the diff has something to show.
  await mapLimit(
    files.filter((_, index) => index % 100 === 0),
    64,
    (file) => writeFile(path.join(root, file), 'export const changed = true;\n'),
  );
  return { root: dir, files };
}

interface AttackFigures {
  attack: string;
  attacker: string;
  attackerMs: number;
  observerCalls: number;
  observerWorstMs: number;
  observerMedianMs: number;
  observerFailures: number;
  restarted: boolean;
  /** Peak resident memory of the attacked worktree process during the attack (Linux), in MB. */
  serverPeakMb: number | null;
}

/** Starts counting a process's peak resident memory afresh (Linux: clear_refs 5). */
async function resetPeakRss(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  await writeFile(`/proc/${pid}/clear_refs`, '5').catch(() => undefined);
}

/** A process's peak resident memory since the last reset (Linux: VmHWM), in MB. */
async function peakRssMb(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Math.round(Number(match[1]) / 1024) : null;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** What the observer process reports for one attack. */
interface Observed {
  latencies: number[];
  failures: number;
}

/**
 * The observer: another client in a process of its own (as another user's agent would be), so
 * that what it waits for is the server, not the attacker's client in this process parsing a 10 MB
 * answer. It connects to `port` and calls read_file every 20 ms between a `start` and a `stop`
 * message, then reports the latency of each call.
 */
async function startObserver(
  port: number,
  token: string,
): Promise<{
  observe(): { stop(): Promise<Observed> };
  close(): void;
}> {
  const child = fork(fileURLToPath(import.meta.url), ['--observe', String(port)], {
    env: { ...process.env, GROVE_OBSERVER_TOKEN: token },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      const exited = () => reject(new Error('the observer process exited'));
      child.once('exit', exited);
      child.once('message', (message) => {
        child.off('exit', exited);
        resolve(message);
      });
    });
  await next(); // connected
  return {
    observe() {
      child.send('start');
      return {
        async stop() {
          const report = next();
          child.send('stop');
          return (await report) as Observed;
        },
      };
    },
    close: () => child.kill(),
  };
}

/** The observer process's side (see startObserver). */
async function runObserver(port: number, token: string): Promise<void> {
  const { client } = await connectClient(port, 'modern-http', token);
  let running = false;
  let loop: Promise<Observed> | undefined;
  const calls = async (): Promise<Observed> => {
    const observed: Observed = { latencies: [], failures: 0 };
    while (running) {
      const started = performance.now();
      try {
        const result = await client.callTool(
          { name: 'read_file', arguments: { path: FILE } },
          { timeout: 120_000 },
        );
        if (result.isError) observed.failures++;
      } catch {
        observed.failures++;
      }
      observed.latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return observed;
  };
  process.on('message', (message) => {
    if (message === 'start') {
      running = true;
      loop = calls();
    } else if (message === 'stop') {
      running = false;
      void loop?.then((observed) => process.send?.(observed));
    }
  });
  process.on('disconnect', () => void client.close().finally(() => process.exit(0)));
  process.send?.('ready');
}

function describeResult(result: unknown): string {
  const value = result as { isError?: boolean; content?: { type: string; text?: string }[] };
  const text = value.content?.[0]?.text ?? '';
  return value.isError ? `error: ${text.slice(0, 110)}` : `ok (${text.length} bytes)`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      files: { type: 'string', default: '100000' },
      observe: { type: 'string' },
    },
  });
  if (values.observe !== undefined) {
    await runObserver(Number(values.observe), process.env['GROVE_OBSERVER_TOKEN'] ?? '');
    return;
  }
  const bigCount = Number(values.files);
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

    // Made before the host starts, removed after it stopped.
    const big = bigCount > 0 ? await makeBigRepo(bigCount) : undefined;
    if (big) cleanups.push(() => rm(big.root, { recursive: true, force: true }));

    const dataDir = await makeTempDir('grove-bench-data-');
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const host = await Host.open({ dataDir, firstPort: randomFirstPort(), worktreePollMs: 0 });
    cleanups.push(() => host.close());
    const added = await host.addRepo(repo.root);
    const id = added.worktrees[0]!.id;
    await host.startServer(id);
    const { token, urls } = host.getConnectionInfo(id);
    const port = Number(new URL(urls.sse).port);
    const connect = async (to = port, bearer = token) => {
      const { client } = await connectClient(to, 'modern-http', bearer);
      cleanups.push(() => client.close());
      return client;
    };
    const observer = await startObserver(port, token);
    cleanups.push(async () => observer.close());
    const attacker = await connect();
    const second = await connect();
    const call = (client: Client, name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }, { timeout: 300_000 });
    // A cache to lock.
    await call(attacker, 'mark_reconciled', { files: ['src/a.ts'] });

    const only = process.env['GROVE_ATTACK'];
    const attacks: {
      name: string;
      run(): Promise<string>;
      observer?: typeof observer;
      serverId?: string;
    }[] = [
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
      // Issue 33: what a repository's specs and configs cost check (check_specs runs it; the
      // window's state is worked out again meanwhile, as each file lands).
      ...(
        [
          ['a dense $ref graph of 1,000 specs (~500,000 cycles): check_specs', denseRefSpecs()],
          ['twelve 2 MB specs, mostly comments: check_specs', bigCommentSpecs()],
          ['1 MiB nested check.yaml, lint.yaml, scoring.yaml: check_specs', nestedConfigs()],
        ] as const
      ).map(([name, files]) => ({
        name,
        async run() {
          await writeFiles(repo.root, files);
          try {
            return describeResult(await call(attacker, 'check_specs', {}));
          } finally {
            await Promise.all(
              Object.keys(files).map((file) => rm(path.join(repo.root, file), { force: true })),
            );
          }
        },
      })),
    ];

    if (big) {
      const bigAdded = await host.addRepo(path.join(big.root, 'repo'));
      const bigId = bigAdded.worktrees[0]!.id;
      await host.startServer(bigId);
      const bigInfo = host.getConnectionInfo(bigId);
      const bigPort = Number(new URL(bigInfo.urls.sse).port);
      const bigObserver = await startObserver(bigPort, bigInfo.token);
      cleanups.push(async () => bigObserver.close());
      const bigClient = await connect(bigPort, bigInfo.token);
      // The window's first state of 100,000 files is worked out at start: let it finish.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const files = `${bigCount.toLocaleString('en-US')} files:`;
      const diff = { spec_path: '.notarai/app.spec.yaml', base_branch: 'main' };
      const bigAttack = (name: string, tool: string, args: Record<string, unknown>) => ({
        name: `${files} ${name}`,
        observer: bigObserver,
        serverId: bigId,
        async run() {
          return describeResult(await call(bigClient, tool, args));
        },
      });
      attacks.push(
        bigAttack('list_affected_specs', 'list_affected_specs', { base_branch: 'main' }),
        bigAttack('get_spec_diff, nothing reconciled yet', 'get_spec_diff', diff),
        bigAttack('mark_reconciled of every file', 'mark_reconciled', { files: big.files }),
        bigAttack('get_spec_diff, warm', 'get_spec_diff', diff),
        bigAttack('mark_reconciled of every file again', 'mark_reconciled', { files: big.files }),
      );
    }

    const figures: AttackFigures[] = [];
    for (const attack of attacks.filter((candidate) => !only || candidate.name.includes(only))) {
      const attackedId = attack.serverId ?? id;
      const pidBefore = host.processId(attackedId);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await resetPeakRss(pidBefore);
      const watching = (attack.observer ?? observer).observe();
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
        restarted: host.processId(attackedId) !== pidBefore,
        serverPeakMb: await peakRssMb(pidBefore),
      });
    }

    if (values.json) {
      console.log(JSON.stringify(figures, null, 2));
      return;
    }
    console.log(
      '| attack | attacker got | attacker time | observer read_file: calls, worst, median, failures | server restarted | server peak RSS |',
    );
    console.log('|---|---|---:|---|---|---:|');
    for (const row of figures) {
      console.log(
        `| ${row.attack} | ${row.attacker.replaceAll('|', '\\|')} | ${(row.attackerMs / 1000).toFixed(1)} s | ` +
          `${row.observerCalls}, ${row.observerWorstMs.toFixed(0)} ms, ${row.observerMedianMs.toFixed(1)} ms, ` +
          `${row.observerFailures} | ${row.restarted ? 'yes' : 'no'} | ` +
          `${row.serverPeakMb === null ? '-' : `${row.serverPeakMb} MB`} |`,
      );
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

await main();
