// `npm run bench:server`: figures for one worktree's MCP server, printed as Markdown tables.
//
// - read_file on a small file: per-call latency (p50, p99) and throughput over legacy SSE, legacy
//   Streamable HTTP (sessions) and modern stateless Streamable HTTP, with 1, 10 and 50 concurrent
//   clients, next to a bare SDK server (McpServer with a no-op tool on plain node:http, legacy
//   sessions and modern stateless, no guard) measured in the same run, the cells interleaved in
//   three rounds. Both servers run in their own process; the clients (SDK v2) all run in this one.
// - one worktree process: start to ready (Host.startServer: fork, load, listen), idle RSS, PSS and
//   private memory, next to the Node floor (scripts/node-floor-process.mjs: fork, IPC, listen).
// - 20 worktrees: Host.open + addRepo + startAll on a repo with 19 linked worktrees.
//
// Options: --calls N (measured calls per cell, default 600), --json (also print raw figures).
// Internal: --bare-server runs the bare SDK server and prints its port.
import { fork, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Client } from '@modelcontextprotocol/client';
import { createMcpHandler, isInitializeRequest, McpServer } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { Host } from '../main/host/host.ts';
import { QUIET_BEFORE_RECLAIM_MS } from '../main/worktree/idle-memory.ts';
import { buildWorktreeBundle } from './build-worktree.ts';
import { connectClient, type Leg } from '../main/testing/mcp-clients.ts';
import { randomFirstPort } from '../main/testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo } from '../main/testing/temp-repo.ts';
import { MB, readFileOnce, rssBytes, sleep } from '../e2e/support/mcp-load.ts';

const FILE = 'small.txt';
const CONTENT = 'a small file for the benchmark\n'.repeat(8);
const CONCURRENCY = [1, 10, 50];
/** Rounds per concurrency level (see the measuring loop). */
const ROUNDS = 3;
const GROVE_LEGS: Leg[] = ['sse', 'legacy-http', 'modern-http'];
const BARE_LEGS: Leg[] = ['legacy-http', 'modern-http'];
const STARTS = 7;
/** Idle means after the worktree process's idle memory reclaim (main/worktree/idle-memory.ts). */
const IDLE_SETTLE_MS = QUIET_BEFORE_RECLAIM_MS + 1_500;
const WORKTREES = 20;

// --- the bare SDK server (child process) -------------------------------------------------------

function bareServer(): McpServer {
  const server = new McpServer({ name: 'bare', version: '0.0.0' });
  server.registerTool(
    'noop',
    { description: 'Does nothing.', inputSchema: z.object({}) },
    async () => ({ content: [{ type: 'text', text: 'ok' }] }),
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

async function runBareServer(): Promise<void> {
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
  const modern = toNodeHandler(createMcpHandler(() => bareServer(), { legacy: 'reject' }));
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    const messages = Array.isArray(body) ? body : [body];
    if (messages.some((message) => isInitializeRequest(message))) {
      const server = bareServer();
      const id = randomUUID();
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessioninitialized: () => {
          sessions.set(id, transport);
        },
      });
      transport.onclose = () => {
        sessions.delete(id);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    await modern(req, res, body);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
  // Ends with its parent (stdin closes).
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

async function spawnBareServer(): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--bare-server'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('bare server did not start in 15 s')), 15_000);
    createInterface({ input: child.stdout }).once('line', (text) => {
      clearTimeout(timer);
      resolve(text);
    });
    child.once('exit', () => reject(new Error('bare server exited')));
  });
  const { port } = JSON.parse(line) as { port: number };
  return {
    port,
    pid: child.pid!,
    stop: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// --- the Node floor (child process) -----------------------------------------------------------

interface ProcessFigures {
  startMs: number;
  rss: number;
  /** Proportional set size: shared pages (the node binary's code) divided among their users. */
  pss: number;
  /** Pages only this process uses: what one more worktree process costs. */
  privateBytes: number;
}

/** RSS, PSS and private bytes of a process, from /proc/<pid>/smaps_rollup (Linux). */
async function memoryOf(pid: number): Promise<Omit<ProcessFigures, 'startMs'> | undefined> {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const field = (name: string): number =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return {
    rss: field('Rss'),
    pss: field('Pss'),
    privateBytes: field('Private_Clean') + field('Private_Dirty'),
  };
}

/** Forks scripts/node-floor-process.mjs as the host forks a worktree: start to listening, memory. */
async function measureNodeFloor(): Promise<ProcessFigures> {
  const before = performance.now();
  const child = fork(fileURLToPath(new URL('./node-floor-process.mjs', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  try {
    child.send({ type: 'start' });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('floor process did not listen in 15 s')),
        15_000,
      );
      child.on('message', (message: { type?: string }) => {
        if (message.type !== 'listening') return;
        clearTimeout(timer);
        resolve();
      });
    });
    const startMs = performance.now() - before;
    await sleep(IDLE_SETTLE_MS);
    const memory = await memoryOf(child.pid!);
    if (!memory) throw new Error('cannot read the floor process memory');
    return { startMs, ...memory };
  } finally {
    child.kill('SIGKILL');
  }
}

// --- measuring ---------------------------------------------------------------------------------

interface Cell {
  server: 'grove read_file' | 'bare no-op';
  leg: Leg;
  clients: number;
  calls: number;
  p50: number;
  p99: number;
  throughput: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One round of one cell: every client's call latencies and the round's wall time. */
interface RoundSamples {
  latencies: number[];
  elapsedMs: number;
}

async function measureRound(
  server: Cell['server'],
  port: number,
  token: string,
  leg: Leg,
  clients: number,
  calls: number,
): Promise<RoundSamples> {
  const call = (client: Client): Promise<unknown> =>
    server === 'grove read_file'
      ? readFileOnce(client, FILE, CONTENT)
      : client.callTool({ name: 'noop', arguments: {} }).then((result) => {
          if (result.isError) throw new Error('no-op failed');
        });
  const connected = await Promise.all(
    Array.from({ length: clients }, () => connectClient(port, leg, token)),
  );
  const perClient = Math.max(5, Math.ceil(calls / clients));
  try {
    for (const { client } of connected) await call(client); // warm-up, not measured
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(
      connected.map(async ({ client }) => {
        for (let index = 0; index < perClient; index++) {
          const before = performance.now();
          await call(client);
          latencies.push(performance.now() - before);
        }
      }),
    );
    return { latencies, elapsedMs: performance.now() - started };
  } finally {
    for (const { client, transport } of connected) {
      if ('terminateSession' in transport) await transport.terminateSession().catch(() => {});
      await client.close().catch(() => {});
    }
  }
}

/** A cell's figures from its rounds: percentiles over every call, throughput over every round. */
function toCell(server: Cell['server'], leg: Leg, clients: number, rounds: RoundSamples[]): Cell {
  const latencies = rounds.flatMap((round) => round.latencies).sort((a, b) => a - b);
  const elapsed = rounds.reduce((sum, round) => sum + round.elapsedMs, 0);
  return {
    server,
    leg,
    clients,
    calls: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    throughput: (latencies.length * 1000) / elapsed,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const ms = (value: number): string => value.toFixed(2);
const mb = (bytes: number): string => (bytes / MB).toFixed(1);

async function runBenchmark(totalCalls: number, json: boolean): Promise<void> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    // One worktree: start time and idle RSS.
    const solo = await makeTempRepo({ [FILE]: CONTENT });
    cleanups.push(solo.cleanup);
    const soloData = await makeTempDir('grove-bench-data-');
    cleanups.push(() => rm(soloData, { recursive: true, force: true }));
    const host = await Host.open({
      dataDir: soloData,
      firstPort: randomFirstPort(),
      worktreePollMs: 0,
    });
    cleanups.push(() => host.close());
    const repo = await host.addRepo(solo.root);
    const id = repo.worktrees[0]!.id;
    const startMs: number[] = [];
    const idleRss: number[] = [];
    /** A fresh process's first client (connect + read_file: loads the MCP side), then a second's. */
    const firstClientMs: number[] = [];
    const secondClientMs: number[] = [];
    const idleMemory: NonNullable<Awaited<ReturnType<typeof memoryOf>>>[] = [];
    const floors: ProcessFigures[] = [];
    for (let run = 0; run < STARTS; run++) {
      // The floor, measured in turn with the worktree so both see the same machine.
      floors.push(await measureNodeFloor());
      const before = performance.now();
      await host.startServer(id);
      startMs.push(performance.now() - before);
      const state = host.snapshot().repos[0]!.worktrees[0]!.status;
      if (state.state !== 'running')
        throw new Error(`worktree did not start: ${JSON.stringify(state)}`);
      if (run < 3) {
        await sleep(IDLE_SETTLE_MS);
        idleRss.push((await rssBytes(host.processId(id)!))!);
        const memory = await memoryOf(host.processId(id)!);
        if (memory) idleMemory.push(memory);
        const info = host.getConnectionInfo(id);
        const soloPort = Number(new URL(info.urls.sse).port);
        for (const times of [firstClientMs, secondClientMs]) {
          const before = performance.now();
          const { client } = await connectClient(soloPort, 'modern-http', info.token);
          await readFileOnce(client, FILE, CONTENT);
          times.push(performance.now() - before);
          await client.close();
        }
      }
      if (run < STARTS - 1) await host.stopServer(id);
    }
    const { token } = host.getConnectionInfo(id);
    const grovePort = host.getConnectionInfo(id).urls.sse;
    const port = Number(new URL(grovePort).port);
    const grovePid = host.processId(id)!;

    // Latency and throughput, grove and bare, interleaved per concurrency level.
    const bare = await spawnBareServer();
    cleanups.push(() => bare.stop());
    // Each cell's calls are split over ROUNDS rounds, and every round runs all five cells of a
    // concurrency level in turn: a slow spell of the shared machine then hits grove and bare alike
    // instead of one whole cell.
    const cells: Cell[] = [];
    const cellsOf = [
      ...GROVE_LEGS.map((leg) => ({ server: 'grove read_file' as const, leg, port, token })),
      ...BARE_LEGS.map((leg) => ({
        server: 'bare no-op' as const,
        leg,
        port: bare.port,
        token: 'unused',
      })),
    ];
    for (const clients of CONCURRENCY) {
      const rounds = cellsOf.map((): RoundSamples[] => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (const [index, cell] of cellsOf.entries()) {
          rounds[index]!.push(
            await measureRound(
              cell.server,
              cell.port,
              cell.token,
              cell.leg,
              clients,
              Math.ceil(totalCalls / ROUNDS),
            ),
          );
        }
      }
      for (const [index, cell] of cellsOf.entries()) {
        cells.push(toCell(cell.server, cell.leg, clients, rounds[index]!));
      }
    }
    await sleep(IDLE_SETTLE_MS);
    const servedStatus = host.snapshot().repos[0]!.worktrees[0]!.status;
    const servedRss = host.processId(id) === grovePid ? await rssBytes(grovePid) : undefined;
    const bareRss = (await rssBytes(bare.pid))!;

    // 20 worktrees from nothing.
    const many = await makeTempRepo({ [FILE]: CONTENT });
    cleanups.push(many.cleanup);
    for (let index = 1; index < WORKTREES; index++) await addWorktree(many, `wt-${index}`);
    const manyData = await makeTempDir('grove-bench-data-');
    cleanups.push(() => rm(manyData, { recursive: true, force: true }));
    const before = performance.now();
    const manyHost = await Host.open({
      dataDir: manyData,
      firstPort: randomFirstPort(),
      worktreePollMs: 0,
    });
    cleanups.push(() => manyHost.close());
    await manyHost.addRepo(many.root);
    await manyHost.startAll();
    const bringUpMs = performance.now() - before;
    const states = manyHost.snapshot().repos[0]!.worktrees;
    const running = states.filter((worktree) => worktree.status.state === 'running').length;
    const notRunning = [
      ...new Set(
        states
          .filter((worktree) => worktree.status.state !== 'running')
          .map((worktree) => JSON.stringify(worktree.status)),
      ),
    ];
    await sleep(IDLE_SETTLE_MS);
    const manyRss: number[] = [];
    for (const worktree of states) {
      const pid = manyHost.processId(worktree.id);
      const rss = pid === undefined ? undefined : await rssBytes(pid);
      if (rss !== undefined) manyRss.push(rss);
    }

    // Report.
    console.log(`\n### read_file vs bare SDK no-op (${totalCalls} calls per cell)\n`);
    console.log('| server | leg | clients | calls | p50 ms | p99 ms | calls/s |');
    console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
    for (const cell of cells) {
      console.log(
        `| ${cell.server} | ${cell.leg} | ${cell.clients} | ${cell.calls} | ${ms(cell.p50)} | ` +
          `${ms(cell.p99)} | ${Math.round(cell.throughput)} |`,
      );
    }
    console.log('\n### Target: read_file p50 within 1.5x the bare no-op p50\n');
    console.log('| leg (bare leg) | clients | grove p50 | bare p50 | ratio | verdict |');
    console.log('| --- | ---: | ---: | ---: | ---: | --- |');
    for (const cell of cells.filter((c) => c.server === 'grove read_file')) {
      const bareLeg: Leg = cell.leg === 'modern-http' ? 'modern-http' : 'legacy-http';
      const floor = cells.find(
        (c) => c.server === 'bare no-op' && c.leg === bareLeg && c.clients === cell.clients,
      )!;
      const ratio = cell.p50 / floor.p50;
      console.log(
        `| ${cell.leg} (${bareLeg}) | ${cell.clients} | ${ms(cell.p50)} | ${ms(floor.p50)} | ` +
          `${ratio.toFixed(2)}x | ${ratio <= 1.5 ? 'met' : 'MISSED'} |`,
      );
    }
    const startMedian = median(startMs);
    const idleMedian = median(idleRss);
    const manyAvg = manyRss.reduce((a, b) => a + b, 0) / Math.max(1, manyRss.length);
    console.log('\n### Worktree processes\n');
    console.log('| figure | value | target | verdict |');
    console.log('| --- | ---: | ---: | --- |');
    console.log(
      `| one worktree, start to ready (median of ${STARTS}; min-max) | ${startMedian.toFixed(0)} ms ` +
        `(${Math.min(...startMs).toFixed(0)}-${Math.max(...startMs).toFixed(0)}) | < 300 ms | ` +
        `${startMedian < 300 ? 'met' : 'MISSED'} |`,
    );
    console.log(
      `| first client of a fresh process: connect + read_file, modern HTTP (loads the MCP side; median of ${firstClientMs.length}) | ` +
        `${median(firstClientMs).toFixed(0)} ms | | |`,
    );
    console.log(
      `| the next client: connect + read_file (median of ${secondClientMs.length}) | ` +
        `${median(secondClientMs).toFixed(0)} ms | | |`,
    );
    const floorStart = median(floors.map((floor) => floor.startMs));
    console.log(
      `| Node floor (fork + IPC + node:http listen, no MCP), start to ready (median of ${floors.length}) | ` +
        `${floorStart.toFixed(0)} ms | | |`,
    );
    console.log(
      `| idle RSS, fresh process (median of ${idleRss.length}) | ${mb(idleMedian)} MB | < 60 MB | ` +
        `${idleMedian < 60 * MB ? 'met' : 'MISSED'} |`,
    );
    const memoryRow = (label: string, values: { pss: number; privateBytes: number }[]): void => {
      console.log(
        `| ${label}: PSS / private (median) | ${mb(median(values.map((v) => v.pss)))} MB / ` +
          `${mb(median(values.map((v) => v.privateBytes)))} MB | | |`,
      );
    };
    memoryRow('idle fresh worktree process', idleMemory);
    console.log(
      `| Node floor, idle RSS (median) | ${mb(median(floors.map((floor) => floor.rss)))} MB | | |`,
    );
    memoryRow('Node floor', floors);
    console.log(
      servedRss === undefined
        ? `| idle RSS after the load above | process replaced during the load: ${JSON.stringify(servedStatus)} | < 60 MB | n/a |`
        : `| idle RSS after the load above | ${mb(servedRss)} MB | < 60 MB | ` +
            `${servedRss < 60 * MB ? 'met' : 'MISSED'} |`,
    );
    console.log(
      `| idle RSS, mean of ${manyRss.length} fresh processes (20-worktree host) | ${mb(manyAvg)} MB | ` +
        `< 60 MB | ${manyAvg < 60 * MB ? 'met' : 'MISSED'} |`,
    );
    console.log(
      `| bare SDK server process RSS after the load (reference) | ${mb(bareRss)} MB | | |`,
    );
    console.log(
      `| 20 worktrees: Host.open + addRepo + startAll | ${bringUpMs.toFixed(0)} ms ` +
        `(${running}/${WORKTREES} running) | | |`,
    );
    if (notRunning.length > 0)
      console.log(`\nNot running after startAll: ${notRunning.join('; ')}`);
    const loadAverage = (await import('node:os')).loadavg().map((value) => value.toFixed(1));
    console.log(`\nLoad average at the end (1/5/15 min): ${loadAverage.join(' / ')}`);
    if (json) {
      console.log(
        JSON.stringify({
          cells,
          startMs,
          firstClientMs,
          secondClientMs,
          idleRss,
          idleMemory,
          floors,
          servedRss,
          servedStatus,
          bareRss,
          manyRss,
          bringUpMs,
        }),
      );
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

const { values } = parseArgs({
  options: {
    'bare-server': { type: 'boolean', default: false },
    calls: { type: 'string', default: '600' },
    json: { type: 'boolean', default: false },
  },
});
if (values['bare-server']) {
  await runBareServer();
} else {
  await buildWorktreeBundle(); // measure the worktree process users run, built from these sources
  await runBenchmark(Number(values.calls), values.json);
  process.exit(0);
}
