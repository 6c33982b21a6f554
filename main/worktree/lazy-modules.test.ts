// What a worktree process that no client has called keeps out of memory (docs/performance.md,
// "Idle memory"): undici (Node's fetch, ~13 MB of RSS), which node:http's ESM facade and the SDK's
// Node adapter would load at start, and the MCP SDK itself (~9 MB: its entry module builds
// hundreds of zod schemas as it loads) and the tool definitions with their schemas, which the
// listener loads with its MCP routes, and
// node:crypto (platform/builtins.ts), first needed by a client's token, and the sync's tap (an
// inotify instance and a watch per directory: only a client's calls sync). Checked on
// the real bundle by a preloaded probe that reports Node's list of loaded built-in modules and
// every module file loaded (the bundle's chunks name their sources in their source maps); the
// first Streamable HTTP client then loads both, which shows the probe sees them.
import { fork } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { WorktreeToHost } from '../../shared/worktree-protocol.ts';
import { BUNDLED_WORKTREE_ENTRY } from '../host/worktree-launcher.ts';
import { connectClient } from '../testing/mcp-clients.ts';
import { inotifyOf } from '../testing/sync-tap-fixtures.ts';
import { waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';

const TOKEN = 'lazy-modules-token-0123456789';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Writes the loaded built-ins and module files to $GROVE_MODULE_PROBE every 100 ms, through a
 * temporary file renamed over it, so the test never reads a report half written.
 */
const PROBE = `import { renameSync, writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
const files = [];
registerHooks({ load(url, context, next) { files.push(url); return next(url, context); } });
const report = process.env.GROVE_MODULE_PROBE;
setInterval(() => {
  writeFileSync(report + '.tmp', JSON.stringify({ builtins: process.moduleLoadList, files }));
  renameSync(report + '.tmp', report);
}, 100).unref();
`;

/** The MCP SDK's sources, and one tool's (the tool definitions load with the first client). */
const SDK = '@modelcontextprotocol/server/';
const A_TOOL = 'main/tools/read-file.ts';

interface LoadedModules {
  builtins: string[];
  files: string[];
}

/** The bundle's chunks among `files` whose source map lists a source whose path contains `source`. */
async function chunksWith(files: string[], source: string): Promise<string[]> {
  const chunks = files.filter((url) => url.startsWith('file:') && url.endsWith('.js'));
  const withSdk: string[] = [];
  for (const url of chunks) {
    const map = await readFile(`${fileURLToPath(url)}.map`, 'utf8').catch(() => '{}');
    const sources = (JSON.parse(map) as { sources?: string[] }).sources ?? [];
    if (sources.some((path) => path.includes(source))) {
      withSdk.push(path.basename(fileURLToPath(url)));
    }
  }
  return withSdk;
}

describe('a worktree process no client has called', () => {
  it('has loaded neither undici, the MCP SDK, the tools nor node:crypto; the first client does', async () => {
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
    const loaded = async (): Promise<LoadedModules> =>
      JSON.parse(
        await readFile(report, 'utf8').catch(() => '{"builtins":[],"files":[]}'),
      ) as LoadedModules;
    const undici = (list: LoadedModules) => list.builtins.filter((name) => name.includes('undici'));
    const crypto = (list: LoadedModules) => list.builtins.includes('NativeModule crypto');
    await waitFor(async () => (await loaded()).builtins.length > 0, 'the probe report');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const atRest = await loaded();
    expect(undici(atRest)).toEqual([]);
    expect(crypto(atRest)).toBe(false);
    // The worker pool starts on its first job; node:util's ESM facade would load it at start too.
    expect(atRest.builtins).not.toContain('NativeModule worker_threads');
    // The probe does see the bundle's chunks (the entry and the engine's, loaded after listening).
    expect(atRest.files.some((url) => url.endsWith('/worktree-process.js'))).toBe(true);
    expect(await chunksWith(atRest.files, SDK)).toEqual([]);
    expect(await chunksWith(atRest.files, A_TOOL)).toEqual([]);
    // Only the watcher's own inotify instance: the sync's tap (a second one, libuv's, and a watch
    // per directory) starts with the first client, whose calls are the only ones that sync.
    if (process.platform === 'linux') expect(inotifyOf(child.pid!).instances).toBe(1);

    const listening = messages.find((m) => m.type === 'listening');
    if (listening?.type !== 'listening') throw new Error('no listening message');
    const { client } = await connectClient(listening.port, 'legacy-http', TOKEN);
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await waitFor(async () => undici(await loaded()).length > 0, 'undici once a client came');
    const afterClient = await loaded();
    expect(await chunksWith(afterClient.files, SDK)).not.toEqual([]);
    expect(await chunksWith(afterClient.files, A_TOOL)).not.toEqual([]);
    expect(crypto(afterClient)).toBe(true);
    if (process.platform === 'linux') {
      await waitFor(() => inotifyOf(child.pid!).instances === 2, 'the sync tap once a client came');
    }
  });
});
