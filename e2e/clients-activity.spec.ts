// What the window says about clients and activity, in real Chromium against `grove serve`: the
// window's own calls (the tool console) are not the worktree's activity — the Activity list leaves
// them out unless "This window's calls" is ticked, and no badge ever counts them; the Clients
// badge counts the rows its table lists and the sidebar's connected count agrees; and the
// activity survives a SIGTERM and restart of the host, the last call before the stop included,
// while Clients (known from this run only) says why it is empty.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { connectClient } from '../main/testing/mcp-clients.ts';
import { randomFirstPort } from '../main/testing/net.ts';
import { makeTempDir, makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { collectPageErrors, launchChromium, type LaunchedChromium } from './support/chromium.ts';
import { startGroveServe, type GroveServe } from './support/grove-serve.ts';

const UI_TIMEOUT_MS = 15_000;

describe("the window's clients and activity in Chromium", () => {
  let repo: TempRepo | undefined;
  let dataDir: string | undefined;
  let serve: GroveServe | undefined;
  let chromium: LaunchedChromium | undefined;
  let page: Page;
  const pageErrors: string[] = [];
  const firstPort = String(randomFirstPort());

  const start = async (): Promise<void> => {
    serve = await startGroveServe({
      repos: [repo!.root],
      dataDir: dataDir!,
      env: { GROVE_FIRST_PORT: firstPort },
    });
    page = await chromium!.context.newPage();
    collectPageErrors(page, pageErrors);
    await page.goto(serve.ui);
  };

  beforeAll(async () => {
    repo = await makeTempRepo({ 'notes.txt': 'hello\n', 'docs/guide.md': '# guide\n' });
    dataDir = await makeTempDir('grove-e2e-data-');
    chromium = await launchChromium();
    await start();
  });

  afterAll(async () => {
    await chromium?.close();
    await serve?.stop();
    await repo?.cleanup();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    expect(pageErrors).toEqual([]);
  });

  const branch = (): string => serve!.worktrees[0]!.branch ?? 'detached';

  async function showWorktree(): Promise<Locator> {
    const sidebar = page.getByRole('navigation', { name: 'Repositories and worktrees' });
    await sidebar.getByRole('button', { name: branch(), exact: true }).click();
    const region = page.getByRole('main').getByRole('region', { name: branch(), exact: true });
    await region.getByText(/^Running on port \d+$/).waitFor({ timeout: UI_TIMEOUT_MS });
    return region;
  }

  async function openTab(region: Locator, name: string): Promise<Locator> {
    await region.getByRole('tab', { name: new RegExp(`^${name}`) }).click();
    return region.getByRole('tabpanel');
  }

  /** A tab's accessible name: its label and, with a badge, "(N)". */
  const tabName = (region: Locator, name: string): Promise<string> =>
    region.getByRole('tab', { name: new RegExp(`^${name}`) }).evaluate((element) => {
      // What is seen: the label and the badge's number (its words are for screen readers).
      const seen = element.cloneNode(true) as typeof element;
      for (const hidden of seen.querySelectorAll('.visually-hidden')) hidden.remove();
      return (seen.textContent ?? '').replace(/\s+/g, ' ').trim();
    });

  test("the window's own calls are never counted in the badges, and listed only on request", async () => {
    const region = await showWorktree();
    // The window calls a tool twice through its tool console.
    const tools = await openTab(region, 'Tools');
    await tools.getByRole('button', { name: /^list_directory/ }).click();
    const args = tools.getByLabel('Arguments (JSON)');
    for (const path of ['.', 'docs']) {
      await args.fill(JSON.stringify({ path }));
      await tools.getByRole('button', { name: 'Call list_directory' }).click();
      await tools
        .getByLabel('Tool result')
        .getByText(path === '.' ? /notes\.txt/ : /guide\.md/)
        .waitFor({ timeout: UI_TIMEOUT_MS });
    }

    // A real client makes two calls and stays connected.
    const { client } = await connectClient(
      serve!.port(branch()),
      'legacy-http',
      serve!.worktrees[0]!.token,
    );
    try {
      await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
      await client.callTool({ name: 'get_file_info', arguments: { path: 'notes.txt' } });

      const activity = await openTab(region, 'Activity');
      await activity.getByText('2 of 2 calls').waitFor({ timeout: UI_TIMEOUT_MS });
      expect(await tabName(region, 'Activity')).toBe('Activity2');
      expect(await activity.getByRole('button', { name: /list_directory/ }).count()).toBe(0);
      // On request, the window's calls are listed too — and the badge still counts the client's.
      await activity.getByLabel(/This window's calls \(2\)/).check();
      await activity.getByText('4 of 4 calls').waitFor();
      await activity
        .getByRole('button', { name: /list_directory.*Grove \(this window\)/ })
        .first()
        .waitFor();
      expect(await tabName(region, 'Activity')).toBe('Activity2');

      // Clients: one row (the SDK client), the badge says 1, the sidebar says 1 connected client.
      const clients = await openTab(region, 'Clients');
      const rows = clients.getByRole('table', { name: 'Clients' }).locator('tbody tr');
      await expect.poll(() => rows.count(), { timeout: UI_TIMEOUT_MS }).toBe(1);
      await expect.poll(() => rows.first().textContent()).toMatch(/grove-test-client.*Connected/);
      await clients.getByText(/This window is connected too/).waitFor();
      expect(await tabName(region, 'Clients')).toBe('Clients1');
      const item = page
        .getByRole('navigation', { name: 'Repositories and worktrees' })
        .getByRole('button', { name: branch(), exact: true });
      await expect
        .poll(() =>
          item.getAttribute('aria-describedby').then((id) => page.locator(`#${id}`).textContent()),
        )
        .toMatch(/, 1 connected client,/);
    } finally {
      await client.close();
    }
  });

  test('after a SIGTERM and a restart, the activity is still there, the last call included', async () => {
    const { client } = await connectClient(
      serve!.port(branch()),
      'sse',
      serve!.worktrees[0]!.token,
    );
    await page.close(); // (a page left open would log the lost connection)
    await client.callTool({ name: 'directory_tree', arguments: { path: 'docs' } });
    // The host stops (SIGTERM) right after the call ended.
    await serve!.stop();
    await client.close().catch(() => undefined);
    await start();

    const region = await showWorktree();
    const activity = await openTab(region, 'Activity');
    await activity.getByText('3 of 3 calls').waitFor({ timeout: UI_TIMEOUT_MS });
    await activity.getByRole('button', { name: /directory_tree.*grove-test-client/ }).waitFor();
    expect(await tabName(region, 'Activity')).toBe('Activity3');
    // The window's two calls were kept as well, still apart.
    await activity.getByLabel(/This window's calls \(2\)/).waitFor();
    // Clients are known from this run only: the tab says why it is empty while Activity is not.
    const clients = await openTab(region, 'Clients');
    await clients.getByText('No clients since Grove started').waitFor();
    await clients
      .getByText(
        /^Activity keeps 3 earlier calls from .*grove-test-client.*: clients that connected before/,
      )
      .waitFor();
  });
});
