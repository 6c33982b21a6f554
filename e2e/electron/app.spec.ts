// The real desktop app, driven by Playwright's _electron: opens a repo, shows its worktrees
// running, an SDK client connects to the URL the window shows and calls read_file, and quitting
// stops the servers. Skips with a one-line reason where no Electron binary exists (like CI here).
// Run where Electron is installed: `npm run build && npx vitest run e2e/electron`
// (on Linux without a display: `xvfb-run -a npx vitest run e2e/electron`).
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { _electron as electron, type ElectronApplication } from 'playwright-core';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPortOpen, randomFirstPort, waitFor } from '../../main/testing/net.ts';
import {
  addWorktree,
  makeTempDir,
  makeTempRepo,
  type TempRepo,
} from '../../main/testing/temp-repo.ts';
import { findElectronBinary } from './electron-binary.ts';

const binary = await findElectronBinary();
const mainEntry = fileURLToPath(new URL('../../out/main/electron-main.js', import.meta.url));

const title =
  'reason' in binary ? `Grove desktop app (skipped: ${binary.reason})` : 'Grove desktop app';
// The default reporter prints no title of a skipped suite: the reason goes to stderr, which
// vitest prints under this file's name.
if ('reason' in binary) console.warn(`e2e/electron skipped: ${binary.reason}`);

describe.skipIf('reason' in binary)(title, () => {
  let app: ElectronApplication;
  let repo: TempRepo;

  beforeAll(async () => {
    repo = await makeTempRepo({ 'hello.txt': 'hello from the desktop app\n' });
    await addWorktree(repo, 'feature-desktop');
    app = await electron.launch({
      executablePath: (binary as { path: string }).path,
      args: [mainEntry, '--no-sandbox'],
      env: {
        ...process.env,
        GROVE_DATA_DIR: await makeTempDir(),
        GROVE_FIRST_PORT: String(randomFirstPort()),
      },
    });
  });

  afterAll(async () => {
    await app?.close().catch(() => undefined);
    await repo?.cleanup();
  });

  it('opens a repo, serves its worktrees, answers an SDK client, and stops them on quit', async () => {
    const window = await app.firstWindow();
    await window.evaluate(
      (path) =>
        (
          window as unknown as { groveHost: { addRepo(input: { path: string }): Promise<unknown> } }
        ).groveHost.addRepo({ path }),
      repo.root,
    );
    await window.evaluate(async () => {
      const host = (
        window as unknown as {
          groveHost: {
            getSnapshot(i: object): Promise<{ repos: { worktrees: { id: string }[] }[] }>;
            startServer(i: { worktreeId: string }): Promise<unknown>;
          };
        }
      ).groveHost;
      const snapshot = await host.getSnapshot({});
      for (const worktree of snapshot.repos.flatMap((r) => r.worktrees))
        await host.startServer({ worktreeId: worktree.id });
    });
    await expect
      .poll(() => window.getByText(/Running on port \d+/).count(), { timeout: 15_000 })
      .toBe(2);
    const shownUrl = await window
      .getByText(/http:\/\/127\.0\.0\.1:\d+\/mcp/)
      .first()
      .textContent();
    const url = new URL(shownUrl!.trim());
    const { token } = await window.evaluate(async () => {
      const host = (
        window as unknown as {
          groveHost: {
            getSnapshot(
              i: object,
            ): Promise<{ repos: { worktrees: { id: string; urls: { mcp: string } }[] }[] }>;
            getConnectionInfo(i: { worktreeId: string }): Promise<{ token: string }>;
          };
        }
      ).groveHost;
      const snapshot = await host.getSnapshot({});
      return host.getConnectionInfo({ worktreeId: snapshot.repos[0]!.worktrees[0]!.id });
    });
    const client = new Client({ name: 'electron-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    const result = await client.callTool({ name: 'read_file', arguments: { path: 'hello.txt' } });
    expect(JSON.stringify(result.structuredContent)).toContain('hello from the desktop app');
    await client.close();

    await app.close();
    await waitFor(
      async () => !(await isPortOpen(Number(url.port))),
      'the server to stop on quit',
      10_000,
    );
  });
});
