// The UI end to end: `grove serve` on a real repository with two linked worktrees, driven in real
// Chromium. Every worktree (picked in the sidebar) shows as running on its port; Stop really closes
// the port; Start brings the server back on the same port; a second tab follows along from host
// events alone.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { addWorktree, makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { collectPageErrors, launchChromium, type LaunchedChromium } from './support/chromium.ts';
import { startGroveServe, type GroveServe } from './support/grove-serve.ts';

const BRANCHES = ['main', 'feature-a', 'feature-b'];
const UI_TIMEOUT_MS = 10_000;

describe('grove serve UI in Chromium', () => {
  let repo: TempRepo | undefined;
  let serve: GroveServe | undefined;
  let chromium: LaunchedChromium | undefined;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    repo = await makeTempRepo();
    await addWorktree(repo, 'feature-a');
    await addWorktree(repo, 'feature-b');
    serve = await startGroveServe({ repos: [repo.root] });
    chromium = await launchChromium();
  });

  afterAll(async () => {
    await chromium?.close();
    await serve?.stop();
    await repo?.cleanup();
  });

  async function openUi(): Promise<Page> {
    const page = await chromium!.context.newPage();
    collectPageErrors(page, pageErrors);
    await page.goto(serve!.ui);
    return page;
  }

  /** Selects the worktree in the sidebar and returns its view (a region named by the branch). */
  async function showWorktree(page: Page, branch: string): Promise<Locator> {
    await page
      .getByRole('navigation', { name: 'Repositories and worktrees' })
      .getByRole('button', { name: branch, exact: true })
      .click();
    return page.getByRole('main').getByRole('region', { name: branch, exact: true });
  }

  async function waitForStatus(region: Locator, text: string): Promise<void> {
    await region.getByText(text, { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
  }

  async function expectEnabled(button: Locator, enabled: boolean): Promise<void> {
    await expect.poll(() => button.isEnabled(), { timeout: UI_TIMEOUT_MS }).toBe(enabled);
  }

  test('shows every worktree running, stops one for real and restarts it on the same port', async () => {
    const host = serve!;
    const page = await openUi();

    for (const branch of BRANCHES) {
      const region = await showWorktree(page, branch);
      await waitForStatus(region, `Running on port ${host.port(branch)}`);
      await region.getByText(host.worktree(branch).sse, { exact: true }).waitFor();
      await region.getByText(host.worktree(branch).mcp, { exact: true }).waitFor();
      await expectEnabled(region.getByRole('button', { name: 'Start', exact: true }), false);
      await expectEnabled(region.getByRole('button', { name: 'Stop', exact: true }), true);
    }

    // A second tab, to show the change arrives by events, not by the clicking tab's own requests.
    const watcher = await openUi();
    const watched = await showWorktree(watcher, 'feature-a');
    await waitForStatus(watched, `Running on port ${host.port('feature-a')}`);

    const port = host.port('feature-a');
    const region = await showWorktree(page, 'feature-a');
    await region.getByRole('button', { name: 'Stop', exact: true }).click();
    await waitForStatus(region, 'Stopped');
    expect(await connectOutcome(port)).toBe('ECONNREFUSED');
    await waitForStatus(watched, 'Stopped');
    await expectEnabled(region.getByRole('button', { name: 'Start', exact: true }), true);
    await expectEnabled(region.getByRole('button', { name: 'Stop', exact: true }), false);

    // The others are untouched (checked from the watching tab, so this one keeps feature-a).
    for (const branch of ['main', 'feature-b']) {
      await waitForStatus(
        await showWorktree(watcher, branch),
        `Running on port ${host.port(branch)}`,
      );
      expect(await connectOutcome(host.port(branch))).toBe('connected');
    }
    await showWorktree(watcher, 'feature-a');

    await region.getByRole('button', { name: 'Start', exact: true }).click();
    await waitForStatus(region, `Running on port ${port}`);
    await waitForStatus(watched, `Running on port ${port}`);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`, {
      headers: { Authorization: `Bearer ${host.worktree('feature-a').token}` },
      signal: AbortSignal.timeout(5_000),
    });
    expect(health.status).toBe(200);
    await expectEnabled(region.getByRole('button', { name: 'Stop', exact: true }), true);

    expect(pageErrors).toEqual([]);
  });
});

/** Opens a TCP connection to 127.0.0.1:port: 'connected' or the error code (e.g. ECONNREFUSED). */
function connectOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(3_000, () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}
