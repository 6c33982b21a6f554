// A worktree whose port another program took, end to end: `grove serve` on a real repository with
// a linked worktree whose default port a plain TCP server holds, driven in real Chromium. The
// sidebar marks the worktree "moved" (a screen reader hears "port moved from N to M"); the Connect
// tab says which port it lost and which it has, and its configs name the new one; "Use port N
// again" is refused with the reason while the other program still holds N, and moves the server
// back once N is free (the note and the mark go, the configs name N again, /healthz answers there).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Server } from 'node:net';
import type { Locator, Page } from 'playwright-core';
import { isPortOpen, occupyPort, randomFreeFirstPort, waitFor } from '../main/testing/net.ts';
import { addWorktree, makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { openGroveUi, type GroveUi } from './support/grove-ui.ts';

const UI_TIMEOUT_MS = 15_000;

describe('a moved port in Chromium', () => {
  let repo: TempRepo | undefined;
  let ui: GroveUi | undefined;
  let squatter: Server | undefined;
  let firstPort: number;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    repo = await makeTempRepo();
    await addWorktree(repo, 'feature-a');
    // main gets the first port, feature-a the next: another program holds that one.
    firstPort = await randomFreeFirstPort(10);
    squatter = await occupyPort(firstPort + 1);
    ui = await openGroveUi({
      repos: [repo.root],
      env: { GROVE_FIRST_PORT: String(firstPort) },
      pageErrors,
    });
  });

  afterAll(async () => {
    await ui?.close();
    if (squatter?.listening) await new Promise((resolve) => squatter!.close(resolve));
    await repo?.cleanup();
  });

  function sidebarItem(page: Page, branch: string): Locator {
    return page
      .getByRole('navigation', { name: 'Repositories and worktrees' })
      .getByRole('button', { name: branch, exact: true });
  }

  test('the sidebar and the Connect tab say so, and the old port comes back once it is free', async () => {
    const { page, serve } = ui!;
    const lost = firstPort + 1;
    const moved = serve.port('feature-a');
    expect(moved).not.toBe(lost);
    expect(moved).not.toBe(serve.port('main'));

    const item = sidebarItem(page, 'feature-a');
    await item.getByText('moved', { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
    // What a screen reader hears of the item says it too.
    const descriptionId = await item.getAttribute('aria-describedby');
    const description = await page.locator(`[id="${descriptionId}"]`).textContent();
    expect(description).toContain(`port moved from ${lost} to ${moved}`);
    // main kept its port: no mark.
    expect(await sidebarItem(page, 'main').getByText('moved', { exact: true }).count()).toBe(0);

    await item.click();
    const region = page.getByRole('main').getByRole('region', { name: 'feature-a', exact: true });
    await region.getByRole('tab', { name: /^Connect/ }).click();
    const note = region.getByRole('note', { name: 'Port moved' });
    await note
      .getByText(
        `Port ${lost} was in use by another program, so this server moved to port ${moved}.`,
        { exact: false },
      )
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await region
      .getByText(`http://127.0.0.1:${moved}/mcp`)
      .first()
      .waitFor({ timeout: UI_TIMEOUT_MS });

    // Still held: the host refuses, the page says why, nothing moves.
    const useAgain = note.getByRole('button', { name: `Use port ${lost} again` });
    await useAgain.click();
    await note
      .getByRole('alert')
      .getByText(`port ${lost} is still in use by another program`, { exact: false })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await isPortOpen(moved)).toBe(true);

    // Free again: the server moves back, the note and the mark go, the configs follow.
    await new Promise((resolve) => squatter!.close(resolve));
    await useAgain.click();
    await note.waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    await item
      .getByText('moved', { exact: true })
      .waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    await region
      .getByText(`http://127.0.0.1:${lost}/mcp`)
      .first()
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await waitFor(() => isPortOpen(lost), `the server to listen on port ${lost} again`);
    const health = await fetch(`http://127.0.0.1:${lost}/healthz`, {
      signal: AbortSignal.timeout(5_000),
    });
    expect(health.status).toBe(200);
    await waitFor(async () => !(await isPortOpen(moved)), `port ${moved} to close`);

    // The browser logs the host's refusal (HTTP 400) while the port was held; nothing else fails.
    expect(pageErrors.filter((error) => !error.includes('status of 400 (Bad Request)'))).toEqual(
      [],
    );
  });
});
