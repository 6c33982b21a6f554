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
    // The row's name starts with its path (another row's drift reason may name this file too).
    panel
      .getByRole('table', { name: 'Specs' })
      .getByRole('row', { name: new RegExp(`^\\S*${file}`) });

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

    // Select the api spec: its intent and its changed files show; mark them all reconciled.
    await specRow(panel, 'api\\.spec\\.yaml')
      .getByRole('button', { name: /api\.spec\.yaml/ })
      .click();
    // The api spec is the system spec's subsystem: nested under it.
    await specRow(panel, 'api\\.spec\\.yaml').getByText('subsystem', { exact: true }).waitFor();
    const detail = panel.getByRole('region', { name: '.notarai/api.spec.yaml' });
    await detail.getByText('The HTTP API answers requests.').waitFor();
    // The selection outlives the tab: to Clients and back, the api spec's detail is still shown.
    const region = page.getByRole('main').getByRole('region', { name: 'main', exact: true });
    await region.getByRole('tab', { name: /^Clients/ }).click();
    await detail.waitFor({ state: 'detached' });
    await region.getByRole('tab', { name: /^Reconciliation/ }).click();
    await detail.getByText('The HTTP API answers requests.').waitFor();
    expect(
      await specRow(panel, 'api\\.spec\\.yaml')
        .getByRole('button', { name: /api\.spec\.yaml/ })
        .getAttribute('aria-pressed'),
    ).toBe('true');
    // Its behaviors, which the diff is judged against.
    const behaviors = detail.getByRole('region', { name: 'Behaviors' });
    await behaviors.getByText('answers', { exact: true }).waitFor();
    await behaviors.getByText('a request').waitFor();
    await detail.getByRole('checkbox', { name: 'src/server.ts' }).waitFor();
    await detail.getByRole('button', { name: 'Mark reconciled' }).click();
    await detail
      .getByRole('status')
      .getByText(/^Marked \d+ files? reconciled\.$/)
      .waitFor({
        timeout: UI_TIMEOUT_MS,
      });
    await expect
      .poll(() => changedCount(panel, 'api\\.spec\\.yaml'), { timeout: LIVE_TIMEOUT_MS })
      .toBe('0');
    await detail.getByText('Every governed file is reconciled.').waitFor();
    // The spec file was marked with its files: the spec no longer counts as changed.
    await expect
      .poll(() => specRow(panel, 'api\\.spec\\.yaml').textContent())
      .not.toContain('spec changed');

    // Edit a governed file on disk: the count rises without a reload.
    await writeFile(path.join(repo!.root, 'src', 'server.ts'), 'export const port = 2;\n');
    await expect
      .poll(() => changedCount(panel, 'api\\.spec\\.yaml'), { timeout: LIVE_TIMEOUT_MS })
      .toBe('1');
    await detail.getByRole('checkbox', { name: 'src/server.ts' }).waitFor();
    // The diff vs main shows the edit, coloured line by line.
    const diff = detail.getByLabel('Diff of .notarai/api.spec.yaml');
    await diff.getByText('+export const port = 2;').waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await diff.locator('.diff__line--add').count()).toBeGreaterThan(0);
    expect(await diff.locator('.diff__line--del').count()).toBeGreaterThan(0);
    await screenshot('07-reconciliation');

    // Mark the selected file reconciled: the count falls back to 0.
    await detail.getByRole('checkbox', { name: 'src/server.ts' }).check();
    await detail.getByRole('button', { name: 'Mark reconciled' }).click();
    await expect
      .poll(() => changedCount(panel, 'api\\.spec\\.yaml'), { timeout: LIVE_TIMEOUT_MS })
      .toBe('0');
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
    await panel.getByRole('button', { name: 'Write snapshot' }).click();
    await panel
      .getByRole('status')
      .getByText(/^Snapshot written to .*reconciliation_state\.json/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    expect(pageErrors).toEqual([]);
  });
});
