// What a client can put in the activity log (issue 33): three tools echoed their whole argument
// into their error, and the log kept errors whole. 1,100 calls with a 3.5 MB argument had grown the
// host to 3.7 GB and grove.db to 3 GB, getSnapshot answered 500, and every restart then died out
// of memory. Here the attack's own shape, through a real MCP client against a real Host: 300 calls
// echoing a 1 MB argument, four at a time, leave every call listed, each cut; grove.db stays
// small, the window's snapshot and event stream carry the cut entries, and the host opens again on
// that data directory — also when the database holds rows an older Grove wrote whole.
import http from 'node:http';
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ACTIVITY_TEXT_CHARS, type ActivityEntry, type WorktreeState } from '../../shared/model.ts';
import { startUiServer } from '../headless/ui-server.ts';
import type { LogRecord } from '../../shared/log-record.ts';
import { createLogger } from '../platform/log.ts';
import { connectClient } from '../testing/mcp-clients.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo, SRC_SPEC } from '../testing/temp-repo.ts';
import { Host } from './host.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

async function openHost(dataDir: string, firstPort: number, records: LogRecord[] = []) {
  const host = await Host.open({
    dataDir,
    firstPort,
    worktreePollMs: 0,
    log: createLogger([(record) => records.push(record)]),
  });
  cleanups.push(() => host.close());
  await host.restoreRepos();
  return host;
}

function onlyWorktree(host: Host): WorktreeState {
  const [worktree] = host.snapshot().repos.flatMap((repo) => repo.worktrees);
  if (!worktree) throw new Error('expected one worktree');
  return worktree;
}

/** The bytes of grove.db and its write-ahead log. */
async function databaseBytes(dataDir: string): Promise<number> {
  let total = 0;
  for (const name of ['grove.db', 'grove.db-wal']) {
    total += await stat(path.join(dataDir, name)).then(
      (info) => info.size,
      () => 0,
    );
  }
  return total;
}

/** Counts the bytes of the window's event stream (/api/events) until closed. */
function countEventBytes(port: number, token: string): { bytes: () => number; close: () => void } {
  let bytes = 0;
  const request = http.get(
    { host: '127.0.0.1', port, path: '/api/events', headers: { Authorization: `Bearer ${token}` } },
    (response) => response.on('data', (chunk: Buffer) => (bytes += chunk.length)),
  );
  request.on('error', () => undefined);
  return { bytes: () => bytes, close: () => request.destroy() };
}

describe('the activity log under an echoed 1 MB argument', () => {
  it('keeps all 300 calls, each cut; grove.db stays small and the host opens again', async () => {
    const repo = await makeTempRepo({ '.notarai/app.spec.yaml': SRC_SPEC, 'src/a.ts': 'a\n' });
    cleanups.push(repo.cleanup);
    const dataDir = await makeTempDir();
    const firstPort = randomFirstPort();
    const host = await openHost(dataDir, firstPort);
    await host.addRepo(repo.root);
    await host.startAll();
    const worktree = onlyWorktree(host);
    const rendererDir = await makeTempDir();
    await writeFile(path.join(rendererDir, 'index.html'), '<!doctype html><title>Grove</title>');
    const ui = await startUiServer({ host, port: 0, token: host.uiToken(), rendererDir });
    cleanups.push(() => ui.close());
    const events = countEventBytes(ui.port, host.uiToken());
    cleanups.push(async () => events.close());

    const { client } = await connectClient(
      worktree.port,
      'modern-http',
      host.getConnectionInfo(worktree.id).token,
    );
    cleanups.push(() => client.close());
    const argument = 'y'.repeat(1024 * 1024);
    const calls = [
      { name: 'export_context', arguments: { base_branch: 'main', spec_path: argument } },
      { name: 'get_drift_score', arguments: { spec_path: argument } },
      { name: 'list_affected_specs', arguments: { base_branch: `${argument}\n` } },
    ];
    const count = 300;
    const echoed: number[] = [];
    for (let next = 0; next < count; next += 4) {
      await Promise.all(
        [0, 1, 2, 3].map(async (offset) => {
          const result = await client.callTool(calls[(next + offset) % calls.length]!);
          expect(result.isError).toBe(true);
          echoed.push(JSON.stringify(result.content).length);
        }),
      );
    }
    // What the client reads says what was wrong, with its argument cut as paths are.
    expect(Math.max(...echoed)).toBeLessThan(1_000);

    const activity = () => host.snapshot().activity[worktree.id] ?? [];
    await waitFor(() => activity().length === count, 'every call in the activity log', 60_000);
    const tools = new Set(activity().map((entry) => entry.tool));
    expect(tools).toEqual(new Set(['export_context', 'get_drift_score', 'list_affected_specs']));
    for (const entry of activity()) {
      expect(entry.ok).toBe(false);
      expect(entry.error!.length).toBeLessThanOrEqual(ACTIVITY_TEXT_CHARS.error);
      expect(entry.argumentsSummary.length).toBeLessThanOrEqual(
        ACTIVITY_TEXT_CHARS.argumentsSummary,
      );
    }
    expect(activity().find((entry) => entry.tool === 'get_drift_score')!.error).toMatch(
      /^no spec at y{200}… \(or it does not parse\)$/,
    );

    // The window: its snapshot loads, and its event stream carried cut entries, not 300 MB.
    const snapshot = await fetch(`http://127.0.0.1:${ui.port}/api/getSnapshot`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${host.uiToken()}`, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(snapshot.status).toBe(200);
    const body = (await snapshot.json()) as { activity: Record<string, ActivityEntry[]> };
    expect(body.activity[worktree.id]).toHaveLength(count);
    expect(events.bytes()).toBeGreaterThan(0);
    expect(events.bytes()).toBeLessThan(5 * 1024 * 1024);

    await client.close();
    events.close();
    await ui.close();
    await host.close();
    expect(await databaseBytes(dataDir)).toBeLessThanOrEqual(50 * 1024 * 1024);

    const again = await openHost(dataDir, firstPort);
    expect(again.snapshot().activity[onlyWorktree(again).id]).toHaveLength(count);
  }, 300_000);

  it('opens on a grove.db holding activity rows written whole, skipping and dropping them', async () => {
    const repo = await makeTempRepo({ 'notes.txt': 'hello\n' });
    cleanups.push(repo.cleanup);
    const dataDir = await makeTempDir();
    const firstPort = randomFirstPort();
    const first = await openHost(dataDir, firstPort);
    await first.addRepo(repo.root);
    const { id } = onlyWorktree(first);
    await first.close();

    // Rows as the Grove before the cut wrote them: 20 MB errors, and one that is not JSON.
    const db = new Database(path.join(dataDir, 'grove.db'));
    const row = (n: number, error: string | null) =>
      JSON.stringify({
        id: `1.x-${n}`,
        at: n,
        clientId: null,
        clientName: 'attacker',
        tool: 'export_context',
        argumentsSummary: '{}',
        durationMs: 1,
        resultBytes: 1,
        ok: error === null,
        error,
      });
    const insert = db.prepare('INSERT INTO activity (worktree_id, entry) VALUES (?, ?)');
    insert.run(Number(id), row(1, null));
    for (let n = 2; n < 7; n++) insert.run(Number(id), row(n, 'z'.repeat(20_000_000)));
    insert.run(Number(id), '{"not": "an entry"');
    insert.run(Number(id), row(8, 'file not found'));
    db.close();

    const records: LogRecord[] = [];
    const again = await openHost(dataDir, firstPort, records);
    const kept = again.snapshot().activity[id] ?? [];
    expect(kept.map((entry) => [entry.id, entry.error])).toEqual([
      ['1.x-1', null],
      ['1.x-8', 'file not found'],
    ]);
    expect(records.map((record) => record.message)).toContainEqual(
      expect.stringMatching(/^skipped 6 stored tool call\(s\) .* dropped 5 over 65536 characters/),
    );
  }, 120_000);
});
