// The Reconciliation tab end to end: `grove serve` on a real repository with a system spec and an
// api spec governing src/**, driven in real Chromium. The tab lists the system spec first; the
// selected spec stays selected across a tab switch; Mark reconciled brings the api spec's changed
// count to 0; editing a governed file on disk raises it to 1 with no reload (the host's
// reconcile-state events), and Mark reconciled brings it back to 0. The spec's diff, an invalid
// spec's error and Snapshot state show too. With GROVE_SCREENSHOTS_DIR set, it saves a screenshot
// of the tab (light and dark) there.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { openGroveUi, type GroveUi } from './support/grove-ui.ts';

const UI_TIMEOUT_MS = 15_000;
/** How long a file edit may take to show in the counts (watcher + recompute + event). */
const LIVE_TIMEOUT_MS = 20_000;
const SCREENSHOTS = process.env['GROVE_SCREENSHOTS_DIR'];

const SYSTEM_SPEC = `schema_version: '0.7'
intent: |
  The whole product.
  It serves an API.
artifacts:
  specs:
    - path: .notarai/*.spec.yaml
subsystems:
  - $ref: ./api.spec.yaml
behaviors:
  - name: whole
    given: anything
    then: works
`;

const API_SPEC = `schema_version: '0.7'
intent: The HTTP API answers requests.
artifacts:
  code:
    - path: src/**
behaviors:
  - name: answers
    given: a request
    then: a response
`;

describe('the Reconciliation tab in Chromium', () => {
  let repo: TempRepo | undefined;
  let ui: GroveUi | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    repo = await makeTempRepo({
      '.notarai/system.spec.yaml': SYSTEM_SPEC,
      '.notarai/api.spec.yaml': API_SPEC,
      'src/server.ts': 'export const port = 1;\n',
      'src/routes.ts': 'export const routes = [];\n',
      'README.md': '# app\n',
    });
    ui = await openGroveUi({ repos: [repo.root], pageErrors });
    ({ page } = ui);
    if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await ui?.close();
    await repo?.cleanup();
  });

  /** Saves the view, tall enough and scrolled to the top so nothing is cropped (the README's hero). */
  async function screenshot(name: string): Promise<void> {
    if (!SCREENSHOTS) return;
    const viewport = page.viewportSize();
    await page.setViewportSize({ width: 1100, height: 1250 });
    await page.evaluate(
      "for (const element of document.querySelectorAll('*')) if (element.scrollTop > 0) element.scrollTop = 0",
    );
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${scheme}.png`) });
    }
    await page.emulateMedia({ colorScheme: 'light' });
    if (viewport) await page.setViewportSize(viewport);
  }

  async function openReconciliation(): Promise<Locator> {
    const sidebar = page.getByRole('navigation', { name: 'Repositories and worktrees' });
    await sidebar.getByRole('button', { name: 'main', exact: true }).click();
    const region = page.getByRole('main').getByRole('region', { name: 'main', exact: true });
    await region.getByRole('tab', { name: /^Server/ }).click();
    await region.getByText(/^Running on port \d+$/).waitFor({ timeout: UI_TIMEOUT_MS });
    await region.getByRole('tab', { name: /^Reconciliation/ }).click();
    return region.getByRole('tabpanel');
  }

  const specRow = (panel: Locator, file: string): Locator =>
    // The row's name starts with its path (another spec's drift reason may name this one's file).
    panel
      .getByRole('table', { name: 'Specs' })
      .getByRole('row', { name: new RegExp(`^\\.notarai/${file}`) });

  /** The "Changed" cell of a spec's row (cells after the row header: governed, changed...). */
  const changedCount = (panel: Locator, file: string): Promise<string | null> =>
    specRow(panel, file).getByRole('cell').nth(1).textContent();

  test('lists the specs, system spec first, and marks, edits and re-marks live', async () => {
    const panel = await openReconciliation();
    const table = panel.getByRole('table', { name: 'Specs' });
    await table.waitFor({ timeout: UI_TIMEOUT_MS });
    await specRow(panel, 'api\\.spec\\.yaml').waitFor({ timeout: UI_TIMEOUT_MS });

    // The system spec comes first.
    const rowHeaders = await table.getByRole('rowheader').allTextContents();
    expect(rowHeaders).toHaveLength(2);
    expect(rowHeaders[0]).toContain('.notarai/system.spec.yaml');
    expect(rowHeaders[1]).toContain('.notarai/api.spec.yaml');
    // The base field shows the state's base (the repo's default branch).
    await expect
      .poll(() => panel.getByLabel('Base branch', { exact: true }).inputValue())
      .toBe('main');

    // A cold cache: every governed file counts as changed, and the sidebar shows drifted specs.
    await expect
      .poll(() => changedCount(panel, 'api\\.spec\\.yaml'), { timeout: UI_TIMEOUT_MS })
      .not.toBe('0');
    const worktreeItem = page
      .getByRole('navigation', { name: 'Repositories and worktrees' })
      .getByRole('button', { name: 'main', exact: true });
    expect(await worktreeItem.locator('.count--drift').textContent()).toMatch(
      /^[1-9]\d* to reconcile$/,
    );

    // Select the api spec: its changed files show first, the spec's text folded below.
    await specRow(panel, 'api\\.spec\\.yaml')
      .getByRole('button', { name: /api\.spec\.yaml/ })
      .click();
    // The api spec is the system spec's subsystem: nested under it.
    await specRow(panel, 'api\\.spec\\.yaml').getByText('subsystem', { exact: true }).waitFor();
    const detail = panel.getByRole('region', { name: '.notarai/api.spec.yaml' });
    const files = detail.getByRole('tree', { name: 'Files of .notarai/api.spec.yaml' });
    // Committed on main and never reconciled: the same as the base.
    await files
      .getByRole('treeitem', { name: 'src/server.ts, same as the base' })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    // The selection outlives the tab: to Clients and back, the api spec's detail is still shown.
    const region = page.getByRole('main').getByRole('region', { name: 'main', exact: true });
    await region.getByRole('tab', { name: /^Clients/ }).click();
    await detail.waitFor({ state: 'detached' });
    await region.getByRole('tab', { name: /^Reconciliation/ }).click();
    await files.waitFor();
    expect(
      await specRow(panel, 'api\\.spec\\.yaml')
        .getByRole('button', { name: /api\.spec\.yaml/ })
        .getAttribute('aria-pressed'),
    ).toBe('true');
    // The spec's text, folded: its intent and behaviors, which the diff is judged against.
    await detail.getByText(/^Spec text: intent, 1 behavior$/).click();
    const specText = detail.getByRole('group').filter({ hasText: 'Spec text' });
    await specText.getByText('The HTTP API answers requests.').waitFor();
    const behaviors = detail.getByRole('region', { name: 'Behaviors' });
    await behaviors.getByText('answers', { exact: true }).waitFor();
    await behaviors.getByText('a request').waitFor();
    // Never reconciled and the same as main: nothing to compare with, and it says why.
    await detail.getByText(/never reconciled: there is no earlier reviewed version/).waitFor();

    // Mark every file: nobody viewed them, so it asks first; then marks them and the spec.
    await detail.getByRole('button', { name: /^Mark all 2…$/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Mark 3 files reconciled?' });
    await dialog.getByText(/never shown in this review/).waitFor();
    await dialog.getByRole('button', { name: 'Mark 3 files' }).click();
    await detail
      .getByRole('status')
      .getByText(/^Marked 3 files reconciled\./)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await expect
      .poll(() => changedCount(panel, 'api\\.spec\\.yaml'), { timeout: LIVE_TIMEOUT_MS })
      .toBe('0');
    await detail
      .getByText('Every governed file is reconciled.')
      .waitFor({ timeout: UI_TIMEOUT_MS });
    // The spec file was marked with its files: the spec no longer counts as changed.
    await expect
      .poll(() => specRow(panel, 'api\\.spec\\.yaml').textContent())
      .not.toContain('spec changed');

    // Edit a governed file on disk: the count rises without a reload.
    await writeFile(path.join(repo!.root, 'src', 'server.ts'), 'export const port = 2;\n');
    await expect
      .poll(() => changedCount(panel, 'api\\.spec\\.yaml'), { timeout: LIVE_TIMEOUT_MS })
      .toBe('1');
    await files
      .getByRole('treeitem', { name: 'src/server.ts, modified' })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    // The selected file's diff vs main shows the edit, coloured line by line.
    const diff = detail.getByLabel('Diff of src/server.ts');
    await diff.getByText('+export const port = 2;').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await diff.locator('.diff__line--add').count()).toBeGreaterThan(0);
    expect(await diff.locator('.diff__line--del').count()).toBeGreaterThan(0);
    await screenshot('07-reconciliation');

    // Tick it Viewed and mark the viewed file: one viewed file, so no question.
    await files.getByRole('checkbox', { name: 'Viewed src/server.ts' }).check();
    await detail.getByRole('button', { name: 'Mark 1 viewed reconciled' }).click();
    await expect
      .poll(() => changedCount(panel, 'api\\.spec\\.yaml'), { timeout: LIVE_TIMEOUT_MS })
      .toBe('0');
    expect(await page.getByRole('dialog').count()).toBe(0);
  });

  test('lists an invalid spec with its file, line and message', async () => {
    const panel = await openReconciliation();
    await writeFile(
      path.join(repo!.root, '.notarai', 'broken.spec.yaml'),
      "schema_version: '0.7'\nintent: [unclosed\n",
    );
    const errors = panel.getByRole('region', { name: '1 invalid spec' });
    await errors.waitFor({ timeout: LIVE_TIMEOUT_MS });
    // The file (with its line when known), then the loader's message.
    const item = errors.getByRole('listitem');
    expect(await item.locator('code').textContent()).toMatch(
      /^\.notarai\/broken\.spec\.yaml(:\d+)?$/,
    );
    expect((await item.locator('.spec-errors__message').textContent())?.length).toBeGreaterThan(0);
    await screenshot('08-reconciliation-invalid-spec');
    await rm(path.join(repo!.root, '.notarai', 'broken.spec.yaml'));
    await errors.waitFor({ state: 'detached', timeout: LIVE_TIMEOUT_MS });
  });

  test('Snapshot state asks first, then reports where it wrote', async () => {
    const panel = await openReconciliation();
    await panel.getByRole('button', { name: 'Snapshot state…' }).click();
    // Before writing, in the window's confirmation: the counts, added up, and the change to the
    // JSON file.
    const choices = page.getByRole('alertdialog', {
      name: 'Write .notarai/reconciliation_state.json?',
    });
    const keep = await choices.getByRole('radio').first().locator('..').textContent();
    const [, cache, files, specs] =
      /(\d+) from this machine's cache = (\d+) files? \+ (\d+) specs?/.exec(keep ?? '') ?? [];
    expect(Number(files) + Number(specs)).toBe(Number(cache));
    const change = choices.getByLabel('Change to .notarai/reconciliation_state.json');
    await change.getByText(/^\+ "last_reconciliation\.timestamp": "\d+Z"/).waitFor();
    await change.getByText(/^\+ src\/server\.ts \(added\)/).waitFor();
    await choices.getByRole('button', { name: 'Write snapshot' }).click();
    await panel
      .getByRole('status')
      .getByText(/^Snapshot written to .*reconciliation_state\.json/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    expect(pageErrors).toEqual([]);
  });
});
