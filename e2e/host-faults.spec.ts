// Fault injection on a real `grove serve` host with three worktrees, while SDK clients on every leg
// hammer all three with read_file: a worktree process killed with SIGKILL, or frozen with SIGSTOP
// (its event loop stops, so it misses its health checks), is replaced on the same port, and the
// other two worktrees' clients never see a single failed call. The Host-level tests
// (main/host/*.test.ts) cover the states and messages; this spec is about "the others never notice"
// under load, with real processes and real signals.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { randomFirstPort, waitFor } from '../main/testing/net.ts';
import { addWorktree, makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { startGroveServe, type GroveServe } from './support/grove-serve.ts';
import {
  hammer,
  isAlive,
  LEGS,
  parentPid,
  pidListeningOn,
  readFileOnce,
  sleep,
  type Tally,
} from './support/mcp-load.ts';
import { connectClient } from '../main/testing/mcp-clients.ts';
import { HANG_AFTER_MS } from '../main/host/worktree-supervisor.ts';

const FILE = 'notes.txt';
const CONTENT = 'hello from every worktree\n';
const BRANCHES = ['main', 'feature-a', 'feature-b'] as const;
/** The bound for a killed server to answer again on its port. */
const BACK_WITHIN_MS = 3_000;
/** Calls per hammering client at most (the loops normally end on the stop flag). */
const MAX_CALLS = 5_000;
/**
 * Pause between one client's calls. Without it the 18 clients keep both cores of a CI machine
 * saturated, and the replacement process's own start (module loading) competes with them.
 */
const THINK_MS = 5;

describe('grove serve under faults, with clients hammering all three worktrees', () => {
  let repo: TempRepo | undefined;
  let serve: GroveServe | undefined;
  let hostPid: number | undefined;
  /** Every worktree pid seen, to make sure none outlives the test. */
  const seenPids = new Set<number>();

  beforeAll(async () => {
    repo = await makeTempRepo({ [FILE]: CONTENT });
    await addWorktree(repo, 'feature-a');
    await addWorktree(repo, 'feature-b');
    serve = await startGroveServe({
      repos: [repo.root],
      env: { GROVE_FIRST_PORT: String(randomFirstPort()) },
    });
    for (const branch of BRANCHES) {
      expect(serve.worktree(branch).error).toBeUndefined();
      const pid = await pidListeningOn(serve.port(branch));
      expect(pid, `a process listens on ${branch}'s port`).toBeDefined();
      seenPids.add(pid!);
      hostPid ??= await parentPid(pid!);
    }
  });

  afterAll(async () => {
    // A test that failed midway may leave a stopped process: let it run so SIGTERM can end it.
    for (const pid of seenPids) if (isAlive(pid)) process.kill(pid, 'SIGCONT');
    await serve?.stop();
    await repo?.cleanup();
    await waitFor(() => [...seenPids].every((pid) => !isAlive(pid)), 'worktree processes to exit');
  });

  /** Runs 2 clients per leg against each worktree until `stop`, returning their tallies. */
  function hammerAll(stop: () => boolean, victim: string) {
    const host = serve!;
    const byBranch = new Map<string, Promise<Tally[]>>();
    for (const branch of BRANCHES) {
      const tallies = LEGS.flatMap((leg) =>
        [0, 1].map(() =>
          hammer({
            port: host.port(branch),
            token: host.worktree(branch).token,
            leg,
            file: FILE,
            expected: CONTENT,
            stop,
            maxCalls: MAX_CALLS,
            // The victim's clients lose their connection; they reconnect like a real client would.
            reconnect: branch === victim,
            thinkMs: THINK_MS,
          }),
        ),
      );
      byBranch.set(branch, Promise.all(tallies));
    }
    return byBranch;
  }

  /** Polls read_file with a fresh stateless client until it answers; returns when it did. */
  async function waitUntilAnswering(branch: string, timeoutMs: number): Promise<number> {
    const host = serve!;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const { client } = await connectClient(
          host.port(branch),
          'modern-http',
          host.worktree(branch).token,
        );
        try {
          await readFileOnce(client, FILE, CONTENT, 2_000);
          return Date.now();
        } finally {
          await client.close().catch(() => undefined);
        }
      } catch (error) {
        if (Date.now() > deadline) {
          // What the host reported meanwhile (restarts, hang detections, give-ups).
          const statuses = [
            ...new Set(host.lines.flatMap((line) => line.match(/"message":"[^"]*"/g) ?? [])),
          ];
          throw new Error(
            `${branch} did not answer within ${timeoutMs} ms: ${String(error)}; host said: ${statuses.join(', ')}`,
            {
              cause: error,
            },
          );
        }
        await sleep(25);
      }
    }
  }

  async function expectOthersUnaffected(
    tallies: Map<string, Promise<Tally[]>>,
    victim: string,
  ): Promise<Record<string, number>> {
    const okCalls: Record<string, number> = {};
    for (const [branch, pending] of tallies) {
      const results = await pending;
      const ok = results.reduce((sum, tally) => sum + tally.ok, 0);
      okCalls[branch] = ok;
      if (branch === victim) continue;
      const failures = results.flatMap((tally) => tally.failures.map((f) => f.message));
      expect(failures, `${branch}'s clients saw failures`).toEqual([]);
      // Every client kept calling the whole time (not one that gave up early).
      for (const tally of results) expect(tally.ok).toBeGreaterThan(10);
    }
    return okCalls;
  }

  async function replacement(branch: string, oldPid: number): Promise<number> {
    let pid: number | undefined;
    await waitFor(
      async () => {
        pid = await pidListeningOn(serve!.port(branch));
        return pid !== undefined && pid !== oldPid;
      },
      `a new process on ${branch}'s port`,
      5_000,
    );
    seenPids.add(pid!);
    return pid!;
  }

  test('kill -9 of one worktree process: the others answer every call, it is back on its port within 3 s', async () => {
    const host = serve!;
    const victim = 'feature-a';
    const port = host.port(victim);
    const oldPid = (await pidListeningOn(port))!;
    expect(await parentPid(oldPid)).toBe(hostPid);

    let stopping = false;
    const tallies = hammerAll(() => stopping, victim);
    await sleep(1_000); // every client connected and calling

    const killedAt = Date.now();
    process.kill(oldPid, 'SIGKILL');
    const answeredAt = await waitUntilAnswering(victim, 10_000);
    const backAfterMs = answeredAt - killedAt;
    await sleep(1_000); // keep the load on after the restart too
    stopping = true;

    const okCalls = await expectOthersUnaffected(tallies, victim);
    const newPid = await replacement(victim, oldPid);
    console.log(
      `kill -9: ${victim} back on port ${port} after ${backAfterMs} ms (pid ${oldPid} -> ${newPid}); ` +
        `ok calls ${JSON.stringify(okCalls)}`,
    );
    expect(backAfterMs).toBeLessThan(BACK_WITHIN_MS);
    expect(isAlive(oldPid)).toBe(false);
    expect(await parentPid(newPid)).toBe(hostPid);
    // The victim's clients were served (a client caught mid-connect by the kill may time out
    // after the load stopped, so not every one of them is required to have succeeded).
    const victimTallies = await tallies.get(victim)!;
    expect(victimTallies.some((tally) => tally.ok > 0)).toBe(true);
    // The host said why it restarted the server.
    expect(host.lines.join('\n')).toContain('server process exited unexpectedly (signal SIGKILL)');
  });

  test(
    'a frozen worktree process (SIGSTOP) is left alone while it could be busy, then replaced once it is past the hang limit; the others answer every call',
    {
      timeout: HANG_AFTER_MS + 30_000,
    },
    async () => {
      const host = serve!;
      const victim = 'feature-b';
      const port = host.port(victim);
      const oldPid = (await pidListeningOn(port))!;

      let stopping = false;
      const tallies = hammerAll(() => stopping, victim);
      await sleep(1_000);

      const frozenAt = Date.now();
      process.kill(oldPid, 'SIGSTOP');
      // Health check: a ping every 250 ms; a late answer is only "busy", HANG_AFTER_MS of silence
      // means hung; then the first restart delay.
      const answeredAt = await waitUntilAnswering(victim, HANG_AFTER_MS + 10_000);
      const backAfterMs = answeredAt - frozenAt;
      await sleep(1_000);
      stopping = true;

      const okCalls = await expectOthersUnaffected(tallies, victim);
      const newPid = await replacement(victim, oldPid);
      console.log(
        `SIGSTOP: ${victim} replaced on port ${port} after ${backAfterMs} ms (pid ${oldPid} -> ${newPid}); ` +
          `ok calls ${JSON.stringify(okCalls)}`,
      );
      expect(isAlive(oldPid)).toBe(false); // the host killed the frozen process
      expect(host.lines.join('\n')).toContain('stopped answering its health check');
      expect(backAfterMs).toBeGreaterThanOrEqual(HANG_AFTER_MS); // busy is not punished
      expect(backAfterMs).toBeLessThan(HANG_AFTER_MS + 5_000);
    },
  );
});
