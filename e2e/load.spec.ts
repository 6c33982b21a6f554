// Load on one worktree server of a real `grove serve` host: 50 concurrent SDK clients, mixed over
// the three legs (legacy SSE, legacy Streamable HTTP sessions, modern stateless Streamable HTTP),
// 100 read_file calls each. Zero failures; and once every client has disconnected, the worktree
// process's resident memory goes back near where it was after a warm-up.
//
// "Near" is: at most BASELINE + 30 MB (RSS, from /proc/<pid>/status). The baseline is taken after
// a warm-up round (every leg used, code paths compiled, heap grown to its working size), because a
// cold process's RSS is not a level the process could ever return to. We cannot force a GC in
// another process, so we give V8's memory reducer a bounded time (SETTLE_MS) to give pages back.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { randomFirstPort, waitFor } from '../main/testing/net.ts';
import { makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { connectClient } from '../main/testing/mcp-clients.ts';
import { startGroveServe, type GroveServe } from './support/grove-serve.ts';
import {
  isAlive,
  LEGS,
  MB,
  pidListeningOn,
  readFileOnce,
  rssBytes,
  sleep,
  type Leg,
} from './support/mcp-load.ts';

const FILE = 'src/small.txt';
const CONTENT = 'a small file\n'.repeat(20);
const CLIENTS = 50;
const CALLS_PER_CLIENT = 100;
const WARM_UP_CLIENTS = 15;
const WARM_UP_CALLS = 20;
/** What "memory back near its start" allows over the post-warm-up baseline. */
const RSS_SLACK_BYTES = 30 * MB;
const SETTLE_MS = 15_000;

interface RunResult {
  ok: number;
  failures: string[];
}

/** `clients` clients (legs round-robin) each making `calls` sequential read_file calls. */
async function run(
  port: number,
  token: string,
  clients: number,
  calls: number,
): Promise<RunResult> {
  const failures: string[] = [];
  let ok = 0;
  const one = async (leg: Leg): Promise<void> => {
    let connected: Awaited<ReturnType<typeof connectClient>> | undefined;
    try {
      connected = await connectClient(port, leg, token);
      for (let call = 0; call < calls; call++) {
        try {
          await readFileOnce(connected.client, FILE, CONTENT, 20_000);
          ok++;
        } catch (error) {
          failures.push(`${leg} call ${call}: ${(error as Error).message}`);
        }
      }
    } catch (error) {
      failures.push(`${leg} connect: ${(error as Error).message}`);
    } finally {
      // A session-based Streamable HTTP client ends its session with DELETE (SDK: terminateSession);
      // close() alone only drops the connection and leaves the session to the idle reaper.
      if (connected && 'terminateSession' in connected.transport) {
        await connected.transport.terminateSession().catch((error: unknown) => {
          failures.push(`${leg} terminate: ${String(error)}`);
        });
      }
      await connected?.client.close().catch((error: unknown) => {
        failures.push(`${leg} close: ${String(error)}`);
      });
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, index) => one(LEGS[index % LEGS.length]!)));
  return { ok, failures };
}

describe('one worktree server under 50 concurrent clients', () => {
  let repo: TempRepo | undefined;
  let serve: GroveServe | undefined;
  let pid: number | undefined;

  beforeAll(async () => {
    repo = await makeTempRepo({ [FILE]: CONTENT });
    serve = await startGroveServe({
      repos: [repo.root],
      env: { GROVE_FIRST_PORT: String(randomFirstPort()) },
    });
    pid = await pidListeningOn(serve.port('main'));
    expect(pid).toBeDefined();
  });

  afterAll(async () => {
    await serve?.stop();
    await repo?.cleanup();
    if (pid !== undefined) await waitFor(() => !isAlive(pid!), 'the worktree process to exit');
  });

  test('5000 read_file calls over SSE, legacy and modern Streamable HTTP: zero failures, memory back near its start', async () => {
    const host = serve!;
    const port = host.port('main');
    const token = host.worktree('main').token;

    const warmUp = await run(port, token, WARM_UP_CLIENTS, WARM_UP_CALLS);
    expect(warmUp.failures).toEqual([]);
    await sleep(2_000);
    const baseline = (await rssBytes(pid!))!;

    const startedAt = Date.now();
    const load = await run(port, token, CLIENTS, CALLS_PER_CLIENT);
    const loadMs = Date.now() - startedAt;
    const peak = (await rssBytes(pid!))!;
    expect(load.failures.slice(0, 10)).toEqual([]);
    expect(load.ok).toBe(CLIENTS * CALLS_PER_CLIENT);

    // Every legacy session was closed by its client: the host lists no open client.
    const openClients = (): number => {
      const last = host.lines.filter((line) => line.includes('"worktree-changed"')).at(-1) ?? '';
      return last.split('"connection":"open"').length - 1;
    };
    await waitFor(() => openClients() === 0, 'every client to show as closed', 10_000).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}; still open: ${openClients()}`);
      },
    );

    let settled = peak;
    const settleStart = Date.now();
    while (Date.now() - settleStart < SETTLE_MS) {
      settled = (await rssBytes(pid!))!;
      if (settled <= baseline + RSS_SLACK_BYTES) break;
      await sleep(500);
    }
    const settleMs = Date.now() - settleStart;
    console.log(
      `load: ${load.ok} calls in ${loadMs} ms (${Math.round((load.ok * 1000) / loadMs)} calls/s); ` +
        `RSS baseline ${(baseline / MB).toFixed(1)} MB, after load ${(peak / MB).toFixed(1)} MB, ` +
        `settled ${(settled / MB).toFixed(1)} MB after ${settleMs} ms`,
    );
    expect(settled).toBeLessThanOrEqual(baseline + RSS_SLACK_BYTES);
    // Still serving after all that.
    const { client } = await connectClient(port, 'sse', token);
    await readFileOnce(client, FILE, CONTENT);
    await client.close();
  });
});
