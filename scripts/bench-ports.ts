// `npm run bench:ports`: how long a host takes to have many worktrees ready when another program
// holds some of the ports the default allocation hands out (issue 32, item 4). A real Host (fresh
// data directory) opens a repository with N worktrees (default 16); before startAll, foreign
// listeners take 3 of the ports the worktrees will be assigned: one answers `/healthz` as a Grove
// worktree server of another data directory would (`{"ok":true}`, the worst case: it looks like
// Grove), two are plain TCP servers that never answer. It prints the time from startAll to every
// worktree running, how many worktrees moved, and whether any start said it waited for "its
// previous server" (none should: no worktree's previous server holds anything here). Goal: under
// 10 s for 16 worktrees. Options: --worktrees N (default 16), --runs N (default 3), --held N (0-3,
// default 3: with 0, the same start with nothing in the way, for comparison), --json.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { Server as NetServer } from 'node:net';
import { rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { Host } from '../main/host/host.ts';
import { createLogger } from '../main/platform/log.ts';
import { occupyPort, randomFreeFirstPort } from '../main/testing/net.ts';
import { addWorktree, makeTempDir, makeTempRepo } from '../main/testing/temp-repo.ts';
import { buildWorktreeBundle } from './build-worktree.ts';

const { values } = parseArgs({
  options: {
    worktrees: { type: 'string', default: '16' },
    runs: { type: 'string', default: '3' },
    held: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});
const worktreeCount = Number(values.worktrees);
const runs = Number(values.runs);

/** Offsets (from the first port) of the ports the foreign listeners take (--held: how many). */
const HELD_OFFSETS = [1, 4, 8].slice(0, Number(values.held));

interface RunResult {
  readyMs: number;
  moved: number;
  waitedForPrevious: number;
  distinctPorts: boolean;
}

/** A server answering `/healthz` as a Grove worktree server of another data directory does. */
function foreignGrove(port: number): Promise<HttpServer> {
  const server = createHttpServer((_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end('{"ok":true}');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

async function oneRun(): Promise<RunResult> {
  const repo = await makeTempRepo({ 'src/index.ts': 'export const answer = 42;\n' });
  const dataDir = await makeTempDir('grove-bench-ports-');
  const firstPort = await randomFreeFirstPort(worktreeCount + 10);
  const held: (HttpServer | NetServer)[] = [];
  const host = await Host.open({
    dataDir,
    firstPort,
    worktreePollMs: 0,
    log: createLogger([]),
  });
  try {
    for (let index = 1; index < worktreeCount; index++) await addWorktree(repo, `wt-${index}`);
    await host.addRepo(repo.root);
    for (const [index, offset] of HELD_OFFSETS.entries()) {
      held.push(await (index === 0 ? foreignGrove : occupyPort)(firstPort + offset));
    }
    let waitedForPrevious = 0;
    host.onEvent((event) => {
      if (event.type !== 'worktree-changed' || event.worktree.status.state !== 'starting') return;
      if (/previous/i.test(event.worktree.status.detail ?? '')) waitedForPrevious++;
    });
    const startedAt = performance.now();
    await host.startAll();
    const readyMs = performance.now() - startedAt;
    const worktrees = host.snapshot().repos.flatMap((repo) => repo.worktrees);
    const notRunning = worktrees.filter((worktree) => worktree.status.state !== 'running');
    if (notRunning.length > 0) {
      throw new Error(`${notRunning.length} worktrees not running: ${JSON.stringify(notRunning)}`);
    }
    const ports = worktrees.map((worktree) => worktree.port);
    return {
      readyMs,
      moved: worktrees.filter((worktree) => worktree.portNotice !== null).length,
      waitedForPrevious,
      distinctPorts: new Set(ports).size === ports.length,
    };
  } finally {
    await host.close();
    for (const server of held) await new Promise((resolve) => server.close(resolve));
    await repo.cleanup();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await buildWorktreeBundle();
const results: RunResult[] = [];
for (let run = 0; run < runs; run++) results.push(await oneRun());
const sorted = results.map((result) => result.readyMs).sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)]!;
console.log(
  `${worktreeCount} worktrees, ${HELD_OFFSETS.length} default ports held by other programs ` +
    `(fresh data directory), ${runs} runs:`,
);
for (const [index, result] of results.entries()) {
  console.log(
    `  run ${index + 1}: ready in ${(result.readyMs / 1000).toFixed(2)} s; ` +
      `${result.moved} moved; ${result.waitedForPrevious} waited for a "previous server"; ` +
      `ports ${result.distinctPorts ? 'distinct' : 'NOT distinct'}`,
  );
}
console.log(
  `median ${(median / 1000).toFixed(2)} s (goal: under 10 s)` +
    (values.json ? `\n${JSON.stringify(results)}` : ''),
);
