// The setup the window's specs share: `grove serve` on the given repositories (a random first
// worktree port, so parallel files never collide) and its UI open in a headless Chromium page that
// records the page's errors.
import type { Page } from 'playwright-core';
import { randomFirstPort } from '../../main/testing/net.ts';
import { collectPageErrors, launchChromium, type LaunchedChromium } from './chromium.ts';
import { startGroveServe, type GroveServe } from './grove-serve.ts';

export interface GroveUi {
  serve: GroveServe;
  chromium: LaunchedChromium;
  /** A page showing the UI. */
  page: Page;
  /** Closes Chromium, then stops the host. */
  close(): Promise<void>;
}

export async function openGroveUi(options: {
  repos: string[];
  /** Extra environment of the host (GROVE_FIRST_PORT is set). */
  env?: Record<string, string>;
  /** Where the page's errors are collected. */
  pageErrors: string[];
}): Promise<GroveUi> {
  const serve = await startGroveServe({
    repos: options.repos,
    env: { GROVE_FIRST_PORT: String(randomFirstPort()), ...options.env },
  });
  let chromium: LaunchedChromium | undefined;
  try {
    chromium = await launchChromium();
    const page = await chromium.context.newPage();
    collectPageErrors(page, options.pageErrors);
    await page.goto(serve.ui);
    const launched = chromium;
    return {
      serve,
      chromium: launched,
      page,
      close: async () => {
        await launched.close();
        await serve.stop();
      },
    };
  } catch (error) {
    await chromium?.close();
    await serve.stop();
    throw error;
  }
}
