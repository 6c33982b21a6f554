// `npm run bench:startup`: how fast `grove` starts and stops as a command-line tool, in one run,
// next to what Node and the MCP SDK cost on their own (issue 24, item 3):
//
// - `node -e 0` and `grove --version`: spawn to exit.
// - a bare MCP SDK stdio server (McpServer with one tool, StdioServerTransport; plain JavaScript
//   run with `node --input-type=module -e`, nothing else loaded) and `grove bridge`, with a host
//   running (`grove serve --no-ui` on a temp repo with a temp data directory) and without one:
//   spawn to the `initialize` answer on stdout; then, after `initialized` and a `tools/list`
//   answer, the time from closing stdin to the process's exit.
// - for reference, `grove --help`, and the bridge from its TypeScript sources (GROVE_CLI_ENTRY=
//   source) and without Node's compile cache (NODE_DISABLE_COMPILE_CACHE=1).
// - with `--other-node PATH` (a Node of another ABI, such as the system's Node 20), `grove --help`
//   and the bridge started by that Node, which runs grove again under the pinned one
//   (bin/other-node.js): what starting `grove` from the PATH with the wrong `node` costs.
//
// Rounds are interleaved (each round runs every case once) after one warm-up round, so load
// drifts hit every case alike; it prints medians (and min-max) of the rounds, then the three
// ratios the issue sets targets for. On Linux it also prints each process's CPU time (user +
// system, its own children included), which a loaded machine disturbs far less than wall time.
// Options: --runs N (default 10), --other-node PATH, --json (also raw figures).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { randomFirstPort } from '../main/testing/net.ts';
import { makeTempDir, makeTempRepo } from '../main/testing/temp-repo.ts';
import { buildCliBundle } from './build-cli.ts';
import { buildWorktreeBundle } from './build-worktree.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GROVE = `${ROOT}bin/grove.js`;

/** The bare SDK stdio server: what any MCP server built on the SDK costs to start. */
const BARE_STDIO_SERVER = `
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
const server = new McpServer({ name: 'bare', version: '0.0.0' });
server.registerTool('noop', { description: 'Does nothing.', inputSchema: z.object({}) }, async () => ({
  content: [{ type: 'text', text: 'ok' }],
}));
await server.connect(new StdioServerTransport());
`;

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'bench-startup', version: '0.0.0' },
  },
};

/**
 * CPU time (ms) of this process's children that have ended and been waited for (Linux:
 * /proc/self/stat's cutime + cstime, in USER_HZ ticks of 10 ms); NaN elsewhere. Read before a
 * child starts and after its `exit` event, the difference is that child's CPU time.
 */
function endedChildrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return Number.NaN;
  }
}

interface Command {
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** The Node that starts it (default: this one, the pinned Node). */
  node?: string;
}

interface ExitFigures {
  /** Spawn to exit. */
  ms: number;
  cpuMs: number;
}

/** Spawn to exit, and the CPU time it took. */
async function timeToExit({ args, env, node }: Command): Promise<ExitFigures> {
  const cpuBefore = endedChildrenCpuMs();
  const started = performance.now();
  const child = spawn(node ?? process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...env },
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}`);
  return { ms, cpuMs: endedChildrenCpuMs() - cpuBefore };
}

interface StdioFigures {
  /** Spawn to the `initialize` answer. */
  initializeMs: number;
  /** stdin closed to exit. */
  exitMs: number;
  /** CPU time of the whole session: start, `initialize`, `tools/list`, exit. */
  cpuMs: number;
}

/**
 * Spawns a stdio MCP server, sends `initialize` at once and times its answer; then `initialized`
 * and `tools/list`, and once that is answered closes stdin and times the exit.
 */
async function stdioServer({ args, env, node }: Command): Promise<StdioFigures> {
  const cpuBefore = endedChildrenCpuMs();
  const started = performance.now();
  const child = spawn(node ?? process.execPath, args, {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number>((resolve) =>
    child.once('exit', () => resolve(performance.now())),
  );
  const answers = new Map<number, (ms: number) => void>();
  const answered = (id: number): Promise<number> =>
    new Promise((resolve, reject) => {
      answers.set(id, resolve);
      const timer = setTimeout(
        () => reject(new Error(`${args.join(' ')}: no answer to ${id} in 60 s; stderr: ${stderr}`)),
        60_000,
      );
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${args.join(' ')} exited; stderr: ${stderr}`));
      });
    });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const { id } = JSON.parse(line) as { id?: number };
    if (id !== undefined) answers.get(id)?.(performance.now());
  });
  const send = (message: object): void => void child.stdin.write(`${JSON.stringify(message)}\n`);
  const initialize = answered(1);
  send(INITIALIZE);
  const initializeMs = (await initialize) - started;
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const listed = answered(2);
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  await listed;
  const closed = performance.now();
  child.stdin.end();
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const exitMs = (await exited) - closed;
  clearTimeout(killer);
  return { initializeMs, exitMs, cpuMs: endedChildrenCpuMs() - cpuBefore };
}

interface Host {
  dataDir: string;
  stop(): Promise<void>;
}

/** `grove serve --no-ui --json` on `repo`, ready. */
async function startHost(repo: string): Promise<Host> {
  const dataDir = await makeTempDir('grove-bench-startup-data-');
  const child = spawn(
    process.execPath,
    [GROVE, 'serve', '--no-ui', '--json', '--data-dir', dataDir, repo],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, GROVE_FIRST_PORT: String(randomFirstPort()) },
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<{ event: string; worktrees: { error?: string }[] }>(
    (resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('grove serve not ready in 60 s')), 60_000);
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { event: string; worktrees: { error?: string }[] });
      });
      void exited.then(() => reject(new Error('grove serve exited')));
    },
  );
  if (ready.event !== 'ready' || ready.worktrees.some((worktree) => worktree.error)) {
    throw new Error(`grove serve did not serve the repo: ${JSON.stringify(ready)}`);
  }
  child.stdout.resume();
  return {
    dataDir,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const ms = (value: number): string => `${Math.round(value)} ms`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '10' },
      'other-node': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer`);

  await Promise.all([buildWorktreeBundle(), buildCliBundle()]);
  const repo = await makeTempRepo({
    'README.md': '# bench\n',
    'src/a.ts': 'export const a = 1;\n',
  });
  const host = await startHost(repo.root);
  const noHostDir = await makeTempDir('grove-bench-startup-nohost-');
  const bridge = (dataDir: string, env?: NodeJS.ProcessEnv): Command => ({
    args: [GROVE, 'bridge', '--data-dir', dataDir, repo.root],
    env,
  });
  const noCache = { NODE_DISABLE_COMPILE_CACHE: '1' };
  const sources = { GROVE_CLI_ENTRY: 'source' };

  const exitCases: Record<string, Command> = {
    'node -e 0': { args: ['-e', '0'] },
    'grove --version': { args: [GROVE, '--version'] },
    'grove --help': { args: [GROVE, '--help'] },
  };
  const otherNode = values['other-node'];
  if (otherNode)
    exitCases['grove --help, other Node'] = { args: [GROVE, '--help'], node: otherNode };
  const stdioCases: Record<string, Command> = {
    'bare SDK stdio server': { args: ['--input-type=module', '-e', BARE_STDIO_SERVER] },
    'grove bridge, host running': bridge(host.dataDir),
    'grove bridge, no host': bridge(noHostDir),
    'grove bridge, host running, no compile cache': bridge(host.dataDir, noCache),
    'grove bridge, no host, no compile cache': bridge(noHostDir, noCache),
    'grove bridge, host running, from sources': bridge(host.dataDir, sources),
    'grove bridge, no host, from sources': bridge(noHostDir, sources),
  };
  if (otherNode) {
    stdioCases['grove bridge, host running, other Node'] = {
      ...bridge(host.dataDir),
      node: otherNode,
    };
    stdioCases['grove bridge, no host, other Node'] = { ...bridge(noHostDir), node: otherNode };
  }

  const exitTimes: Record<string, ExitFigures[]> = {};
  const stdioTimes: Record<string, StdioFigures[]> = {};
  try {
    for (let round = 0; round <= runs; round++) {
      const warmUp = round === 0; // fills the compile cache; not counted
      for (const [name, command] of Object.entries(exitCases)) {
        const time = await timeToExit(command);
        if (!warmUp) (exitTimes[name] ??= []).push(time);
      }
      for (const [name, command] of Object.entries(stdioCases)) {
        const figures = await stdioServer(command);
        if (!warmUp) (stdioTimes[name] ??= []).push(figures);
      }
      process.stderr.write(warmUp ? 'warm-up round done\n' : `round ${round}/${runs}\n`);
    }
  } finally {
    await host.stop();
    await repo.cleanup();
    await rm(noHostDir, { recursive: true, force: true });
  }

  const range = (values: number[]): string =>
    `${ms(Math.min(...values))}-${ms(Math.max(...values))}`;
  const other = otherNode ? `; other Node: ${otherNode}` : '';
  console.log(`\nMedians of ${runs} interleaved runs (Node ${process.version}${other}).\n`);
  console.log('| command | to exit (median) | range | CPU |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const [name, figures] of Object.entries(exitTimes)) {
    const times = figures.map((figure) => figure.ms);
    const cpu = median(figures.map((figure) => figure.cpuMs));
    console.log(`| \`${name}\` | ${ms(median(times))} | ${range(times)} | ${ms(cpu)} |`);
  }
  console.log(
    '\n| stdio server | `initialize` answered | range | exit after stdin closes | range | CPU |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, figures] of Object.entries(stdioTimes)) {
    const initialize = figures.map((figure) => figure.initializeMs);
    const exit = figures.map((figure) => figure.exitMs);
    const cpu = median(figures.map((figure) => figure.cpuMs));
    console.log(
      `| ${name} | ${ms(median(initialize))} | ${range(initialize)} | ${ms(median(exit))} | ${range(exit)} | ${ms(cpu)} |`,
    );
  }

  const exitMedian = (name: string): number => median(exitTimes[name]!.map((figure) => figure.ms));
  const cpuMedian = (name: string): number =>
    median((exitTimes[name] ?? stdioTimes[name]!).map((figure) => figure.cpuMs));
  const initializeMedian = (name: string): number =>
    median(stdioTimes[name]!.map((figure) => figure.initializeMs));
  const exitAfterStdin = (name: string): number =>
    median(stdioTimes[name]!.map((figure) => figure.exitMs));
  const bare = initializeMedian('bare SDK stdio server');
  const checks: [string, string, boolean][] = [];
  const ratio = (label: string, value: number, target: number): void => {
    checks.push([label, `${value.toFixed(2)}x (target <= ${target}x)`, value <= target]);
  };
  ratio(
    '`grove --version` / `node -e 0`',
    exitMedian('grove --version') / exitMedian('node -e 0'),
    2,
  );
  for (const mode of ['host running', 'no host']) {
    ratio(
      `bridge \`initialize\` (${mode}) / bare SDK stdio server`,
      initializeMedian(`grove bridge, ${mode}`) / bare,
      1.5,
    );
  }
  for (const mode of ['host running', 'no host']) {
    const exit = exitAfterStdin(`grove bridge, ${mode}`);
    checks.push([
      `bridge exit after stdin closes (${mode})`,
      `${ms(exit)} (target <= 100 ms)`,
      exit <= 100,
    ]);
  }
  console.log('\n| target | measured | met |');
  console.log('| --- | ---: | :---: |');
  for (const [label, measured, met] of checks) {
    console.log(`| ${label} | ${measured} | ${met ? 'yes' : '**no**'} |`);
  }
  const bareCpu = cpuMedian('bare SDK stdio server');
  console.log(
    `\nCPU time ratios: \`grove --version\` / \`node -e 0\` ${(cpuMedian('grove --version') / cpuMedian('node -e 0')).toFixed(2)}x; ` +
      `bridge session / bare server session: host running ${(cpuMedian('grove bridge, host running') / bareCpu).toFixed(2)}x, ` +
      `no host ${(cpuMedian('grove bridge, no host') / bareCpu).toFixed(2)}x.`,
  );
  if (values.json) console.log(JSON.stringify({ exitTimes, stdioTimes }, null, 2));
}

await main();
