// A worktree served by a real Host, reached through the MCP SDK client, for the benchmark rows.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Host } from '../../main/host/host.ts';
import { connectClient } from '../../main/testing/mcp-clients.ts';
import { randomFirstPort } from '../../main/testing/net.ts';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import type { ReconcileState } from '../../shared/reconcile.ts';

/** Makes the worktree process's live index vouch for nothing (see markRuns). */
let ignoreRewrites = 0;

/** Serves `root` as `grove serve` would (a real worktree process) and connects an SDK client. */
export async function mcpClientOf(
  root: string,
  dataDir: string,
): Promise<{
  client: Client;
  host: Host;
  settled(since: number): Promise<void>;
  close(): Promise<void>;
}> {
  // The worktree process inherits it: each traced request appends its stages there.
  process.env.GROVE_STAGE_TIMINGS = stagesFile(dataDir);
  const host = await Host.open({ dataDir, firstPort: randomFirstPort(), worktreePollMs: 0 });
  const repo = await host.addRepo(root);
  const id = repo.worktrees[0]!.id;
  await host.startServer(id);
  // At rest, as an agent finds it: the window's first reconciliation state is computed.
  const deadline = Date.now() + 120_000;
  while (host.snapshot().repos[0]?.worktrees[0]?.reconcileTotals == null) {
    if (Date.now() > deadline) throw new Error('no reconciliation state after 120 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { token, urls } = host.getConnectionInfo(id);
  const { client } = await connectClient(Number(new URL(urls.mcp).port), 'modern-http', token);
  let lastState = 0;
  host.onEvent((event) => {
    if (event.type === 'reconcile-state') lastState = performance.now();
  });
  return {
    client,
    host,
    /** Resolves once the window's state was recomputed after `since` (at most 60 s). */
    settled: async (since) => {
      const until = performance.now() + 60_000;
      while (lastState <= since && performance.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: async () => {
      await client.close().catch(() => undefined);
      await host.close();
    },
  };
}

export async function callOk(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool(
    { name, arguments: args },
    { timeout: 600_000 },
  )) as CallToolResult;
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result;
}

/**
 * Like callOk, but an answer refused for its size (over main/mcp/tool-results.ts's cap: the whole
 * work was done, only the answer was not sent) counts as done; says whether it was refused. At
 * 200,000 files get_spec_diff's cold answer (12.9 MiB of diff) is over the cap.
 */
export async function callDoneOrTooBig(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ tooBig: boolean }> {
  const result = (await client.callTool(
    { name, arguments: args },
    { timeout: 600_000 },
  )) as CallToolResult;
  const text = JSON.stringify(result.content);
  const tooBig = result.isError === true && text.includes('an answer may hold, so it was not sent');
  if (result.isError && !tooBig) throw new Error(`${name}: ${text}`);
  return { tooBig };
}

/** Resolves when `host` emits a reconcile-state whose state passes `test`; its time then. */
export function nextState(host: Host, test: (state: ReconcileState) => boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error('no reconcile-state with the change within 60 s'));
    }, 60_000);
    const stop = host.onEvent((event) => {
      if (event.type !== 'reconcile-state' || !test(event.state)) return;
      clearTimeout(timer);
      stop();
      resolve(performance.now());
    });
  });
}

/** The check warnings of the window's last state (a new uncovered file adds one). */
export function lastWarnings(host: Host): number {
  const snapshot = host.snapshot();
  const id = snapshot.repos[0]!.worktrees[0]!.id;
  return snapshot.reconcile[id]?.check?.warnings ?? 0;
}

/** Where the worktree process served from `dataDir` writes its stage timings. */
export function stagesFile(dataDir: string): string {
  return `${dataDir}-stages.jsonl`;
}

/** The stages of one request, as the worktree process traced them (stage-timings.ts). */
export type StageMarks = [string, number][];

/** The traces appended since the last read (the file is emptied). */
export async function takeStageTraces(file: string): Promise<StageMarks[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  await writeFile(file, '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => (JSON.parse(line) as { marks: StageMarks }).marks);
}

export async function dropLiveIndex(root: string): Promise<void> {
  await writeFile(path.join(root, '.gitignore'), `# rewritten ${++ignoreRewrites}\n*.log\n`);
}
