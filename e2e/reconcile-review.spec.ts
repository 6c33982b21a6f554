// A spec's review in real Chromium (`grove serve`): a spec with 2,000 files changed since
// reconciled lists all 2,000 (a virtualised folder tree: the last file is reachable), filters them
// by path, tells new, modified and deleted files apart, shows the selected file's diff above the
// spec's text, and moves between files with j / k. Marking every file asks first (focus on
// Cancel, Escape cancels and gives focus back), then marks; Undo brings the files back. The drift
// score shows its terms and weights, and says the spec was never reconciled.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { openGroveUi, type GroveUi } from './support/grove-ui.ts';

const UI_TIMEOUT_MS = 20_000;
/** How long a change may take to show in the counts (watcher + recompute + event). */
const LIVE_TIMEOUT_MS = 30_000;
const GENERATED = 1_997;
const SPEC = '.notarai/big.spec.yaml';
const SCREENSHOTS = process.env['GROVE_SCREENSHOTS_DIR'];

const BIG_SPEC = `schema_version: '0.7'
intent: |
  Everything generated, and the sources.
artifacts:
  code:
    - path: gen/**
    - path: src/**
behaviors:
  - name: generates
    given: a build
    then: files
`;

describe('a spec review in Chromium', () => {
  let repo: TempRepo | undefined;
  let ui: GroveUi | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const files: Record<string, string> = {
      [SPEC]: BIG_SPEC,
      'src/keep.ts': 'keep\n',
      'src/edit.ts': 'before\n',
      'src/gone.ts': 'gone\n',
    };
    for (let index = 0; index < GENERATED; index++) {
      files[`gen/d${String(index % 10)}/f${String(index).padStart(4, '0')}.txt`] = `${index}\n`;
    }
    repo = await makeTempRepo(files);
    // On the worktree: one file modified, one deleted, one new (untracked).
    await writeFile(path.join(repo.root, 'src/edit.ts'), 'after\n');
    await rm(path.join(repo.root, 'src/gone.ts'));
    await writeFile(path.join(repo.root, 'src/added.ts'), 'added\n');
    ui = await openGroveUi({ repos: [repo.root], pageErrors });
    ({ page } = ui);
    if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true });
  });

  /** Saves the review (light and dark), the detail's top at the top of the view. */
  async function screenshot(name: string, detail: Locator): Promise<void> {
    if (!SCREENSHOTS) return;
    const viewport = page.viewportSize();
    await page.setViewportSize({ width: 1100, height: 900 });
    await detail.evaluate('(element) => element.scrollIntoView({ block: "start" })');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${scheme}.png`) });
    }
    await page.emulateMedia({ colorScheme: 'light' });
    if (viewport) await page.setViewportSize(viewport);
  }

  afterAll(async () => {
    await ui?.close();
    await repo?.cleanup();
  });

  async function openSpec(): Promise<{ panel: Locator; detail: Locator; files: Locator }> {
    const sidebar = page.getByRole('navigation', { name: 'Repositories and worktrees' });
    await sidebar.getByRole('button', { name: 'main', exact: true }).click();
    const region = page.getByRole('main').getByRole('region', { name: 'main', exact: true });
    await region.getByRole('tab', { name: /^Server/ }).click();
    await region.getByText(/^Running on port \d+$/).waitFor({ timeout: UI_TIMEOUT_MS });
    await region.getByRole('tab', { name: /^Reconciliation/ }).click();
    const panel = region.getByRole('tabpanel');
    await panel
      .getByRole('table', { name: 'Specs' })
      .getByRole('button', { name: /big\.spec\.yaml/ })
      .click();
    const detail = panel.getByRole('region', { name: SPEC });
    const files = detail.getByRole('tree', { name: `Files of ${SPEC}` });
    await files.waitFor({ timeout: UI_TIMEOUT_MS });
    return { panel, detail, files };
  }

  test('lists all 2,000 changed files, filters them, tells their status and shows a diff at once', async () => {
    const { detail, files } = await openSpec();
    // True counts: 1,997 generated + keep, edit, added = 2,000 changed; the deletion apart.
    await detail.getByRole('heading', { name: 'Changed since reconciled (2,000)' }).waitFor();
    await detail.getByText(/^2,001 files · 0 viewed/).waitFor({ timeout: UI_TIMEOUT_MS });
    await files.getByRole('treeitem', { name: /^gen\/ 1,997$/ }).waitFor();
    // The list is virtualised: far fewer rows in the DOM than files.
    expect(await files.getByRole('treeitem').count()).toBeLessThan(100);

    // The path filter.
    const filter = detail.getByRole('searchbox', { name: 'Filter files by path' });
    await filter.fill('src/');
    await detail.getByText(/^4 of 2,001 files match/).waitFor();
    // New, modified and deleted, told apart.
    await files.getByRole('treeitem', { name: 'src/added.ts, new, untracked' }).waitFor();
    await files.getByRole('treeitem', { name: 'src/edit.ts, modified' }).waitFor();
    await files.getByRole('treeitem', { name: 'src/gone.ts, deleted' }).waitFor();
    await files.getByRole('treeitem', { name: 'src/keep.ts, same as the base' }).waitFor();

    // The selected file's diff shows at once, above the spec's text (folded below the review).
    await files.getByRole('treeitem', { name: 'src/edit.ts, modified' }).click();
    const diff = detail.getByLabel('Diff of src/edit.ts');
    await diff.getByText('+after').waitFor({ timeout: UI_TIMEOUT_MS });
    const specText = detail.getByText(/^Spec text: intent/);
    const diffBox = await diff.boundingBox();
    const specBox = await specText.boundingBox();
    expect(diffBox!.y).toBeLessThan(specBox!.y);
    // j moves to the next file: the deletion, its diff shown.
    await files.press('j');
    await expect
      .poll(() =>
        files.getByRole('treeitem', { name: 'src/gone.ts, deleted' }).getAttribute('aria-selected'),
      )
      .toBe('true');
    await detail.getByLabel('Diff of src/gone.ts').getByText('-gone').waitFor();
    await files.press('k');
    await detail.getByLabel('Diff of src/edit.ts').waitFor();
    await filter.fill('');
    // Home goes to the first row, gen/; Enter folds it (and unfolds it again).
    await files.press('Home');
    await files.press('Enter');
    await expect
      .poll(() =>
        files.getByRole('treeitem', { name: /^gen\/ 1,997$/ }).getAttribute('aria-expanded'),
      )
      .toBe('false');
    await screenshot('10-reconciliation-review', detail);
    await files.press('Enter');
    // Every file is reachable: End reaches the last row of the whole list.
    await filter.fill('');
    await files.focus();
    await files.press('End');
    await files.getByRole('treeitem', { name: 'src/keep.ts, same as the base' }).waitFor();
    await files.press('Home');
    expect(pageErrors).toEqual([]);
  });

  test('the drift score shows its terms and weights; a never-reconciled spec says so', async () => {
    const { detail } = await openSpec();
    await detail.getByText(/^Drift score/).click();
    const terms = detail.getByRole('table', { name: 'Drift score terms' });
    await terms.waitFor({ timeout: UI_TIMEOUT_MS });
    const changed = terms.getByRole('row', { name: /Share of its files changed/ });
    // Every governed file changed (never reconciled): 1.00, NotarAI's default weight 0.30.
    expect(await changed.getByRole('cell').allTextContents()).toEqual(['1.00', '0.30', '0.30']);
    await terms.getByRole('row', { name: /Days since the last snapshot/ }).waitFor();
    await terms.getByRole('row', { name: /Open decisions/ }).waitFor();
    await terms.getByRole('row', { name: /artifact globs matching no file/ }).waitFor();
    await terms.getByRole('row', { name: /Unspecced files/ }).waitFor();
    await detail.getByText(/^Never reconciled: the spec itself was never marked/).waitFor();
    await detail
      .getByText(/^review the changed files and mark them reconciled \(−0\.30\)$/)
      .waitFor();
  });

  test('a bulk mark asks first, and Undo brings the files back', async () => {
    const { panel, detail } = await openSpec();
    await detail.getByText(/^2,001 files/).waitFor({ timeout: UI_TIMEOUT_MS });
    const markAll = detail.getByRole('button', { name: 'Mark all 2,000…' });
    await markAll.click();
    const dialog = page.getByRole('dialog', { name: 'Mark 2,001 files reconciled?' });
    await dialog.waitFor();
    // It says how many were never shown: this visit showed the first file only (selected at
    // once), so 1,999 of the 2,000 changed files (the spec file is marked with them); and where
    // the mark is kept.
    await dialog.getByText(/^1,999 of them were never shown in this review/).waitFor();
    await dialog.getByText(/this machine's hash cache/).waitFor();
    await dialog.getByText(/Snapshot state/).waitFor();
    // Focus on the safe answer; Escape cancels and gives focus back to the button.
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Cancel');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Mark all 2,000…');

    const changed = (): Promise<string | null> =>
      panel
        .getByRole('table', { name: 'Specs' })
        .getByRole('row', { name: /big\.spec\.yaml/ })
        .getByRole('cell')
        .nth(1)
        .textContent();
    await markAll.click();
    await dialog.getByRole('button', { name: 'Mark 2,001 files' }).click();
    await detail
      .getByRole('status')
      .getByText(/^Marked 2,001 files reconciled\./)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await expect.poll(changed, { timeout: LIVE_TIMEOUT_MS }).toBe('0');
    // No file differs any more: the review says so, and not before the state agrees.
    await detail
      .getByText('Every governed file is reconciled.')
      .waitFor({ timeout: UI_TIMEOUT_MS });

    await detail.getByRole('button', { name: 'Undo' }).click();
    await detail
      .getByRole('status')
      .getByText(/^Mark undone: 0 cache rows restored, 2,001 rows the mark had added removed\./)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await expect.poll(changed, { timeout: LIVE_TIMEOUT_MS }).toBe('2,000');
    await detail.getByRole('heading', { name: 'Changed since reconciled (2,000)' }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});
