// The setup the window's specs share: `grove serve` on the given repositories (a random first
// worktree port, so parallel files never collide) and its UI open in a headless Chromium page that
// records the page's errors; and the checks they share: axe-core's serious and critical
// violations, and a confirmation met by keyboard (focus on Cancel, Escape cancels, focus returns).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { expect } from 'vitest';
import type { Locator, Page } from 'playwright-core';
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

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/**
 * axe-core's serious and critical violations in the page as it is now ("rule target: summary"),
 * or only those of the given rules.
 */
export async function axeViolations(page: Page, rules?: string[]): Promise<string[]> {
  // Evaluated through the DevTools protocol: the page's CSP (script-src 'self') refuses a tag.
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) {
    await page.evaluate(await readFile(AXE_SOURCE, 'utf8'));
  }
  const options = rules ? { runOnly: { type: 'rule', values: rules } } : {};
  return (await page.evaluate(
    `axe.run(document, ${JSON.stringify(options)}).then((r) =>
      r.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .flatMap((v) => v.nodes.map((n) =>
          v.id + ' ' + n.target.join(' ') + ': ' + (n.failureSummary || '').replace(/\\s+/g, ' '))))`,
  )) as string[];
}

/** Whether the element is the page's focused one. */
export function isFocused(element: Locator): Promise<boolean> {
  // Typed without the DOM library (the e2e code is Node's): the node and its document's focus.
  return element.evaluate(
    (node: { ownerDocument: { activeElement: unknown } }) =>
      node === node.ownerDocument.activeElement,
  );
}

/**
 * Opens a confirmation from its opener by keyboard and checks what a keyboard user needs: it
 * takes focus on Cancel (so Enter right away changes nothing), Escape closes it and focus is back
 * on the opener; opened again, Enter on Cancel closes it the same way. Returns the dialog.
 */
export async function checkConfirmation(
  page: Page,
  opener: Locator,
  name: string | RegExp,
  timeout = 15_000,
): Promise<Locator> {
  const dialog = page.getByRole('alertdialog', { name });
  for (const close of ['Escape', 'Enter'] as const) {
    await opener.focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor({ timeout });
    const cancel = dialog.getByRole('button', { name: 'Cancel', exact: true });
    expect(await isFocused(cancel), `${String(name)} opens on Cancel`).toBe(true);
    await page.keyboard.press(close);
    await dialog.waitFor({ state: 'hidden', timeout });
    expect(await isFocused(opener), `focus back on the opener after ${close}`).toBe(true);
  }
  return dialog;
}
