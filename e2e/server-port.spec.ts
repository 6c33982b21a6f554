// The Server tab's port field end to end: `grove serve` on a real repository with a linked
// worktree, driven in real Chromium. A port out of range is refused in the page with the reason;
// a port another worktree has is refused by the host, and the page says so; a free port moves the
// running server there for real (the old port closes, /healthz answers on the new one) and the
// status, the field and the URLs follow.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { isPortOpen, randomFirstPort, waitFor } from '../main/testing/net.ts';
import { addWorktree, makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { collectPageErrors, launchChromium, type LaunchedChromium } from './support/chromium.ts';
import { startGroveServe, type GroveServe } from './support/grove-serve.ts';

const UI_TIMEOUT_MS = 15_000;

describe('changing a worktree port in Chromium', () => {
  let repo: TempRepo | undefined;
  let serve: GroveServe | undefined;
  let chromium: LaunchedChromium | undefined;
  let firstPort: number;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    repo = await makeTempRepo();
    await addWorktree(repo, 'feature-a');
    // The worktrees take the first ports of a random block of 50; the test moves into that block.
    firstPort = randomFirstPort();
    serve = await startGroveServe({
      repos: [repo.root],
      env: { GROVE_FIRST_PORT: String(firstPort) },
    });
    chromium = await launchChromium();
  });

  afterAll(async () => {
    await chromium?.close();
    await serve?.stop();
    await repo?.cleanup();
  });

  async function showWorktree(page: Page, branch: string): Promise<Locator> {
    await page
      .getByRole('navigation', { name: 'Repositories and worktrees' })
      .getByRole('button', { name: branch, exact: true })
      .click();
    const region = page.getByRole('main').getByRole('region', { name: branch, exact: true });
    await region.getByRole('tab', { name: /^Server/ }).click();
    return region;
  }

  /** A port of this test's block that no program listens on. */
  async function freePort(): Promise<number> {
    for (let port = firstPort + 10; port < firstPort + 50; port++) {
      if (!(await isPortOpen(port))) return port;
    }
    throw new Error(`no free port in ${firstPort + 10}..${firstPort + 49}`);
  }

  test('moves the running server to the port typed in the Server tab', async () => {
    const host = serve!;
    const oldPort = host.port('main');
    const page = await chromium!.context.newPage();
    collectPageErrors(page, pageErrors);
    await page.goto(host.ui);
    const region = await showWorktree(page, 'main');
    await region
      .getByText(`Running on port ${oldPort}`, { exact: true })
      .waitFor({ timeout: UI_TIMEOUT_MS });

    const field = region.getByRole('spinbutton', { name: 'Port' });
    const save = region.getByRole('button', { name: 'Save port' });
    expect(await field.inputValue()).toBe(String(oldPort));
    expect(await save.isEnabled()).toBe(false); // nothing to save yet

    // Out of range: refused in the page, with the reason; the server stays where it is.
    await field.fill('80');
    await save.click();
    await region
      .getByRole('alert')
      .getByText(
        'Port 80 is below 1024 (reserved for the system): enter a port from 1024 to 65535.',
      )
      .waitFor();
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await isPortOpen(oldPort)).toBe(true);

    // Another worktree's port: the host refuses, the page shows its answer.
    await field.fill(String(host.port('feature-a')));
    expect(await field.getAttribute('aria-invalid')).toBeNull();
    await save.click();
    await region
      .getByRole('alert')
      .getByText(`port ${host.port('feature-a')} is already assigned to the worktree`)
      .waitFor({ timeout: UI_TIMEOUT_MS });

    // A free port: the server restarts there.
    const newPort = await freePort();
    await field.fill(String(newPort));
    await save.click();
    await region
      .getByRole('status')
      .getByText(`Saved: the server restarted on port ${newPort}.`, { exact: true })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await region
      .getByText(`Running on port ${newPort}`, { exact: true })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await field.inputValue()).toBe(String(newPort));
    await region.getByText(`http://127.0.0.1:${newPort}/sse`, { exact: true }).waitFor();
    await region.getByText(`http://127.0.0.1:${newPort}/mcp`, { exact: true }).waitFor();

    const health = await fetch(`http://127.0.0.1:${newPort}/healthz`, {
      headers: { Authorization: `Bearer ${host.worktree('main').token}` },
      signal: AbortSignal.timeout(5_000),
    });
    expect(health.status).toBe(200);
    await waitFor(async () => !(await isPortOpen(oldPort)), `port ${oldPort} to close`);

    // The browser logs the host's refusal (HTTP 400) of the assigned port; nothing else may fail.
    expect(pageErrors.filter((error) => !error.includes('status of 400 (Bad Request)'))).toEqual(
      [],
    );
  });
});
