// What a worktree process that no client has called keeps out of memory: undici (Node's fetch,
// ~13 MB of RSS), which node:http's ESM facade and the SDK's Node adapter would load at start
// (docs/performance.md, "Idle memory"). Checked on the real bundle with Node's own list of loaded
// built-in modules, reported by a preloaded probe; the first Streamable HTTP client then loads it,
// which shows the probe sees it.
import { fork } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorktreeToHost } from '../../shared/worktree-protocol.ts';
import { BUNDLED_WORKTREE_ENTRY } from '../host/worktree-launcher.ts';
import { connectClient } from '../testing/mcp-clients.ts';
import { waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';

const TOKEN = 'lazy-modules-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Writes process.moduleLoadList to $GROVE_MODULE_PROBE every 100 ms. */
const PROBE = `import { writeFileSync } from 'node:fs';
setInterval(() => writeFileSync(process.env.GROVE_MODULE_PROBE, JSON.stringify(process.moduleLoadList)), 100).unref();
`;

describe('a worktree process no client has called', () => {
  it('has not loaded undici; the first Streamable HTTP client loads it', async () => {
    const repo = await makeTempRepo({ 'a.txt': 'a\n' });
    cleanups.push(() => repo.cleanup());
    const dir = await makeTempDir('grove-module-probe-');
    const probe = path.join(dir, 'probe.mjs');
    const report = path.join(dir, 'modules.json');
    await writeFile(probe, PROBE);
    const child = fork(BUNDLED_WORKTREE_ENTRY, [], {
      execArgv: ['--import', probe],
      env: { ...process.env, GROVE_MODULE_PROBE: report },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    cleanups.push(() => child.kill('SIGKILL'));
    const messages: WorktreeToHost[] = [];
    child.on('message', (message) => messages.push(message as WorktreeToHost));
    child.send({ type: 'start', root: repo.root, port: 0, token: TOKEN, requireToken: true });
    // The engine loads after `listening`; its first state means start-up is over.
    await waitFor(
      () => messages.some((m) => m.type === 'reconcile-state'),
      'the first state',
      20_000,
    );
    const loaded = async (): Promise<string[]> =>
      JSON.parse(await readFile(report, 'utf8').catch(() => '[]')) as string[];
    const undici = (list: string[]) => list.filter((name) => name.includes('undici'));
    await waitFor(async () => (await loaded()).length > 0, 'the probe report');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(undici(await loaded())).toEqual([]);

    const listening = messages.find((m) => m.type === 'listening');
    if (listening?.type !== 'listening') throw new Error('no listening message');
    const { client } = await connectClient(listening.port, 'legacy-http', TOKEN);
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await waitFor(async () => undici(await loaded()).length > 0, 'undici once a client came');
  });
});
