// The Coverage tab end to end: `grove serve` on a real repository with a system spec and an api spec
// (one glob matching nothing), driven in real Chromium. The tab shows the check's verdict and
// counts, the folders with their bars and numbers, an uncovered file, and a file added on disk
// appears in the list and the counts without a reload (the host's reconcile-state events). An
// orphaned glob's link shows the spec's line and opens the spec in the Reconciliation tab, whose
// table shows each spec's drift score with its word; the sidebar shows the worktree's. The same
// check summary and overall score reach `grove serve --json` consumers (reconcile-state lines) and
// the HostApi snapshot. The tab strip keeps every tab visible at 800 and 900 px, and the tab's text
// passes axe-core's colour-contrast rule in light and dark. A file removed and a spec edited (its
// orphaned glob gone) show without a reload too. With GROVE_SCREENSHOTS_DIR set, it saves
// 09-coverage-light.png / -dark.png there.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type AxeCore from 'axe-core';
import type { Locator, Page } from 'playwright-core';
import { makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import type { GroveServe } from './support/grove-serve.ts';
import { openGroveUi, type GroveUi } from './support/grove-ui.ts';

const UI_TIMEOUT_MS = 15_000;
/** How long a file added on disk may take to show (watcher + recompute + event): a bound, not a goal. */
const LIVE_TIMEOUT_MS = 10_000;
const SCREENSHOTS = process.env['GROVE_SCREENSHOTS_DIR'];
const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const SYSTEM_SPEC = `schema_version: '0.8'
intent: The whole product.
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

// Line 6 is the glob that matches nothing (an orphaned glob, a critical error).
const API_SPEC = `schema_version: '0.8'
intent: The HTTP API answers requests.
artifacts:
  code:
    - path: src/**
    - path: lib/**
behaviors:
  - name: answers
    given: a request
    then: a response
    tested_by:
      - path: src/server.ts
`;

describe('the Coverage tab in Chromium', () => {
  let repo: TempRepo | undefined;
  let ui: GroveUi | undefined;
  let serve: GroveServe | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    repo = await makeTempRepo({
      '.notarai/system.spec.yaml': SYSTEM_SPEC,
      '.notarai/api.spec.yaml': API_SPEC,
      'src/server.ts': 'export const port = 1;\n',
      'src/routes.ts': 'export const routes = [];\n',
      'README.md': '# app\n',
      'docs/guide.md': '# guide\n',
    });
    ui = await openGroveUi({ repos: [repo.root], pageErrors });
    ({ serve, page } = ui);
    if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await ui?.close();
    await repo?.cleanup();
  });

  const region = (): Locator =>
    page.getByRole('main').getByRole('region', { name: 'main', exact: true });

  async function openTab(name: RegExp): Promise<Locator> {
    const sidebar = page.getByRole('navigation', { name: 'Repositories and worktrees' });
    await sidebar.getByRole('button', { name: 'main', exact: true }).click();
    await region()
      .getByRole('tab', { name: /^Server/ })
      .click();
    await region()
      .getByText(/^Running on port \d+$/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await region().getByRole('tab', { name }).click();
    return region().getByRole('tabpanel');
  }

  /** The last reconcile-state `grove serve --json` printed. */
  const lastState = (): { computedAt: number; durationMs: number } => {
    const states = serve!.lines
      .map((line) => JSON.parse(line) as { event: string; state?: unknown })
      .filter((line) => line.event === 'reconcile-state');
    return states.at(-1)!.state as { computedAt: number; durationMs: number };
  };

  /** The uncovered files the tab lists, in order. */
  const uncoveredFiles = (panel: Locator): Promise<string[]> =>
    panel
      .getByRole('region', { name: /^Uncovered files/ })
      .locator('li code')
      .allTextContents();

  /** A folder row's cells after its name: [bar, "governed / files", "percent%"]. */
  const folderCells = (panel: Locator, label: string): Promise<string[]> =>
    panel
      .getByRole('table', { name: 'Coverage by folder' })
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: label, exact: true }) })
      .getByRole('cell')
      .allTextContents();

  test('shows the check, the folders and the uncovered files, and a new file without a reload', async () => {
    const panel = await openTab(/^Coverage/);
    const summary = panel.getByRole('definition');
    await panel.getByLabel('Check summary').waitFor({ timeout: UI_TIMEOUT_MS });
    // An orphaned glob is an error: the check fails, in words.
    const summaryText = await panel.getByLabel('Check summary').textContent();
    expect(summaryText).toMatch(/failing/);
    expect(await summary.count()).toBeGreaterThan(0);

    // README.md and docs/guide.md are uncovered; the src files are governed.
    await expect
      .poll(() => uncoveredFiles(panel), { timeout: UI_TIMEOUT_MS })
      .toEqual(['README.md', 'docs/guide.md']);
    expect(await folderCells(panel, 'src/')).toEqual(['', '2 / 2', '100%']);
    expect(await folderCells(panel, 'docs/')).toEqual(['', '0 / 1', '0%']);
    const all = await folderCells(panel, 'All files');
    // src/server.ts, src/routes.ts, README.md, docs/guide.md (specs are internal to .notarai/).
    expect(all.slice(1)).toEqual(['2 / 4', '50%']);

    // A file added on disk shows up, with no reload.
    const added = Date.now();
    await writeFile(path.join(repo!.root, 'notes.txt'), 'remember\n');
    await expect
      .poll(() => uncoveredFiles(panel), { timeout: LIVE_TIMEOUT_MS, interval: 50 })
      .toEqual(['README.md', 'docs/guide.md', 'notes.txt']);
    // A figure, not an assertion: where the time went (the state's own computation, then the rest).
    const shown = Date.now();
    const state = lastState();
    console.log(
      `coverage e2e: a new file showed in ${shown - added} ms (state computed ` +
        `${state.computedAt - added} ms after the write, in ${Math.round(state.durationMs)} ms)`,
    );
    expect((await folderCells(panel, 'All files')).slice(1)).toEqual(['2 / 5', '40%']);
    // A new governed file moves the folder's numbers too.
    await writeFile(path.join(repo!.root, 'src', 'extra.ts'), 'export {};\n');
    await expect
      .poll(() => folderCells(panel, 'src/'), { timeout: LIVE_TIMEOUT_MS })
      .toEqual(['', '3 / 3', '100%']);

    // The drift score of the worktree, with its word, in the sidebar.
    const item = page
      .getByRole('navigation', { name: 'Repositories and worktrees' })
      .getByRole('button', { name: 'main', exact: true });
    expect(await item.locator('.drift__word').textContent()).toMatch(/^(healthy|review|overdue)$/);
  });

  test("an orphaned glob links to its spec's line and opens the spec in Reconciliation", async () => {
    const panel = await openTab(/^Coverage/);
    const orphans = panel.getByRole('region', { name: /^Orphaned globs/ });
    await orphans.waitFor({ timeout: UI_TIMEOUT_MS });
    const link = orphans.getByRole('button', { name: '.notarai/api.spec.yaml:6' });
    await link.click();
    expect(await link.getAttribute('aria-expanded')).toBe('true');
    const excerpt = orphans.getByRole('region', { name: '.notarai/api.spec.yaml excerpt' });
    const here = excerpt.locator('.spec-excerpt__line--here');
    await here.waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await here.textContent()).toContain('- path: lib/**');
    expect(await here.textContent()).toContain('Line 6, the finding');
    await screenshot('09-coverage');

    await excerpt.getByRole('button', { name: 'Open in Reconciliation' }).click();
    const reconciliation = region().getByRole('tab', { name: /^Reconciliation/ });
    expect(await reconciliation.getAttribute('aria-selected')).toBe('true');
    const recPanel = region().getByRole('tabpanel');
    const specHeading = recPanel
      .getByRole('region', { name: '.notarai/api.spec.yaml' })
      .getByRole('heading', { name: '.notarai/api.spec.yaml' });
    await specHeading.waitFor({ timeout: UI_TIMEOUT_MS });
    // The spec's detail is scrolled into view.
    const viewport = page.viewportSize();
    await expect
      .poll(async () => {
        const box = await specHeading.boundingBox();
        return box !== null && box.y >= 0 && box.y + box.height <= (viewport?.height ?? 0);
      })
      .toBe(true);
    // Each spec's drift: the score and its word.
    const table = recPanel.getByRole('table', { name: 'Specs' });
    const driftHeader = await table.getByRole('columnheader').allTextContents();
    expect(driftHeader.at(-1)).toBe('Drift');
    for (const row of await table.getByRole('row').all()) {
      if ((await row.getByRole('cell').count()) === 0) continue; // the header row
      expect(await row.getByRole('cell').last().textContent()).toMatch(
        /^\d\.\d\d(healthy|review|overdue)$/,
      );
    }
  });

  test('grove serve --json and the HostApi snapshot carry the check summary and the overall score', async () => {
    const states = () =>
      serve!.lines
        .map((line) => JSON.parse(line) as { event: string; state?: Record<string, unknown> })
        .filter((line) => line.event === 'reconcile-state');
    await expect.poll(() => states().length, { timeout: UI_TIMEOUT_MS }).toBeGreaterThan(0);
    const last = states().at(-1)!.state as {
      check: { errors: number; warnings: number; passed: boolean };
      drift: { score: number; status: string };
    };
    expect(last.check.errors).toBeGreaterThan(0);
    expect(last.check.passed).toBe(false);
    expect(last.drift.status).toMatch(/^(healthy|review|overdue)$/);

    const ui = new URL(serve!.ui);
    const response = await fetch(new URL('/api/getSnapshot', ui), {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${ui.searchParams.get('token')}`,
        'Content-Type': 'application/json',
      },
      body: '{}',
    });
    expect(response.status).toBe(200);
    const snapshot = (await response.json()) as {
      reconcile: Record<string, { check: { errors: number }; drift: { status: string } }>;
    };
    const [state] = Object.values(snapshot.reconcile);
    expect(state!.check.errors).toBeGreaterThan(0);
    expect(state!.drift.status).toMatch(/^(healthy|review|overdue)$/);
  });

  test('every tab stays visible at 800 and 900 px, and the Coverage tab passes the contrast rule', async () => {
    const panel = await openTab(/^Coverage/);
    await panel.getByLabel('Check summary').waitFor({ timeout: UI_TIMEOUT_MS });
    const viewport = page.viewportSize();
    const tablist = region().getByRole('tablist', { name: 'Worktree views' });
    for (const width of [800, 900]) {
      await page.setViewportSize({ width, height: 800 });
      const fits = await tablist.evaluate((element) => {
        const strip = element.getBoundingClientRect();
        return [...element.querySelectorAll('[role="tab"]')].every((tab) => {
          const box = tab.getBoundingClientRect();
          return box.left >= strip.left - 0.5 && box.right <= strip.right + 0.5 && box.width > 0;
        });
      });
      expect(fits, `every tab inside the strip at ${width} px`).toBe(true);
      // The page never scrolls sideways.
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(
        true,
      );
    }
    if (viewport) await page.setViewportSize(viewport);

    // Open a spec excerpt so its lines are checked too.
    const link = panel
      .getByRole('region', { name: /^Orphaned globs/ })
      .getByRole('button', { name: '.notarai/api.spec.yaml:6' });
    if ((await link.getAttribute('aria-expanded')) !== 'true') await link.click();
    await panel.locator('.spec-excerpt__line--here').waitFor({ timeout: UI_TIMEOUT_MS });
    // The page's CSP refuses inline scripts (addScriptTag): evaluate axe's source instead.
    await page.evaluate(await readFile(AXE_SCRIPT, 'utf8'));
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      const violations = await page.evaluate(async () => {
        const axe = (globalThis as unknown as { axe: typeof AxeCore }).axe;
        const result = await axe.run(
          { include: [['.tab-panel']] },
          { runOnly: { type: 'rule', values: ['color-contrast'] } },
        );
        return result.violations.flatMap((violation) =>
          violation.nodes.map((node) => `${node.target.join(' ')}: ${node.failureSummary ?? ''}`),
        );
      });
      expect(violations, `contrast in ${scheme}`).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    expect(pageErrors).toEqual([]);
  });

  test('a file removed and a spec edited show without a reload', async () => {
    const panel = await openTab(/^Coverage/);
    await expect
      .poll(() => uncoveredFiles(panel), { timeout: UI_TIMEOUT_MS })
      .toContain('notes.txt');
    await rm(path.join(repo!.root, 'notes.txt'));
    await expect
      .poll(() => uncoveredFiles(panel), { timeout: LIVE_TIMEOUT_MS })
      .toEqual(['README.md', 'docs/guide.md']);

    // The spec loses the glob that matched nothing: no orphaned glob, and the check passes.
    await writeFile(
      path.join(repo!.root, '.notarai', 'api.spec.yaml'),
      API_SPEC.replace('    - path: lib/**\n', ''),
    );
    await panel
      .getByRole('region', { name: /^Orphaned globs/ })
      .waitFor({ state: 'detached', timeout: LIVE_TIMEOUT_MS });
    await expect
      .poll(() => panel.getByLabel('Check summary').textContent(), { timeout: LIVE_TIMEOUT_MS })
      .toMatch(/passed/);
    expect(pageErrors).toEqual([]);
  });

  /** Saves the tab, tall enough and scrolled to the top so nothing is cropped. */
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
});
