// Decision proposals reviewed in the window, end to end: `grove serve` on a real repository whose
// .notarai/decision-log.json holds proposals on two specs (api: with a `decisions:` section; app:
// none), driven in real Chromium. The counts show in the totals, the spec table and the worktree's
// list; a spec's detail lists its proposals with their rationale, and a related file opens its
// diff (in the spec's review, or under the proposal in the worktree's list). Accept… shows the spec's change in a dialog (focus on Cancel, Escape cancels, focus back on
// the opener, nothing written), then writes on confirm; a proposal of the other spec is rejected
// with a reason from the worktree's list. After each, the spec and the log are byte for byte what
// `grove decisions accept|reject` (the real command) writes on a copy of the same files, and the
// counts follow live. With GROVE_SCREENSHOTS_DIR set, it saves the accept's dialog and the spec's
// proposals (11-decision-*-light|dark.png) there.
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { makeTempDir, makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { openGroveUi, type GroveUi } from './support/grove-ui.ts';
import { API_SPEC, APP_SPEC, decisionLog } from '../main/testing/decision-fixtures.ts';

const UI_TIMEOUT_MS = 15_000;
/** How long a file edit may take to show (watcher + recompute + event). */
const LIVE_TIMEOUT_MS = 20_000;
const SCREENSHOTS = process.env['GROVE_SCREENSHOTS_DIR'];
const GROVE = fileURLToPath(new URL('../bin/grove.js', import.meta.url));

const LOG = decisionLog(
  '{"spec_path":".notarai/app.spec.yaml","date":"2026-04-16","choice":"Keep sessions in SQLite","rationale":"Sessions survived the crash test","origin":"agent","status":"proposed"}',
);

const SPEC = '.notarai/api.spec.yaml';
const LOG_FILE = '.notarai/decision-log.json';

/** The real `grove decisions ...` in `worktree`; it must succeed. */
function groveDecisions(worktree: string, ...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [GROVE, 'decisions', ...args, '--worktree', worktree],
      (error, _stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(),
    );
  });
}

describe('decision proposals in Chromium', () => {
  let repo: TempRepo | undefined;
  let copy = '';
  let ui: GroveUi | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    repo = await makeTempRepo({
      [SPEC]: API_SPEC,
      '.notarai/app.spec.yaml': APP_SPEC,
      [LOG_FILE]: LOG,
      'src/api/a.ts': 'export const a = 1;\n',
      'src/api/http.ts': 'export const retries = 3;\n',
      'src/app.ts': 'export const app = 1;\n',
    });
    // The related file changed in the worktree: its diff vs main shows the change.
    await writeFile(path.join(repo.root, 'src/api/http.ts'), 'export const retries = 5;\n');
    copy = await makeTempDir();
    await cp(path.join(repo.root, '.notarai'), path.join(copy, '.notarai'), { recursive: true });
    ui = await openGroveUi({ repos: [repo.root], pageErrors });
    ({ page } = ui);
  });

  afterAll(async () => {
    await ui?.close();
    await repo?.cleanup();
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  /** Saves the page (light and dark) as `name`-light|dark.png, when asked to. */
  async function screenshot(name: string): Promise<void> {
    if (!SCREENSHOTS) return;
    await mkdir(SCREENSHOTS, { recursive: true });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${scheme}.png`) });
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  const read = (root: string, file: string) => readFile(path.join(root, file), 'utf8');
  /** The text of the element that has the focus. */
  const focused = () => page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''");

  async function openReconciliation(): Promise<Locator> {
    const sidebar = page.getByRole('navigation', { name: 'Repositories and worktrees' });
    await sidebar.getByRole('button', { name: 'main', exact: true }).click();
    const region = page.getByRole('main').getByRole('region', { name: 'main', exact: true });
    await region.getByRole('tab', { name: /^Server/ }).click();
    await region.getByText(/^Running on port \d+$/).waitFor({ timeout: UI_TIMEOUT_MS });
    await region.getByRole('tab', { name: /^Reconciliation/ }).click();
    return region.getByRole('tabpanel');
  }

  const proposedTotal = (panel: Locator) =>
    panel
      .locator('.reconcile-totals__item')
      .filter({ hasText: 'Decisions proposed' })
      .locator('dd')
      .textContent();
  const specRow = (panel: Locator, file: string): Locator =>
    panel.getByRole('table', { name: 'Specs' }).getByRole('row', { name: new RegExp(file) });

  test('accepts one proposal and rejects another with the files the CLI writes', async () => {
    const panel = await openReconciliation();
    // The counts: the totals, each spec's row, the worktree's list.
    await expect.poll(() => proposedTotal(panel), { timeout: LIVE_TIMEOUT_MS }).toBe('3');
    await specRow(panel, 'api\\.spec\\.yaml').getByText('1 decision proposed').waitFor();
    await specRow(panel, 'app\\.spec\\.yaml').getByText('2 decisions proposed').waitFor();
    const worktreeList = panel.getByRole('region', {
      name: 'Decisions: 3 proposals awaiting a person',
    });
    await worktreeList.waitFor({ timeout: UI_TIMEOUT_MS });

    // The api spec's detail: its one proposal, rationale with its line break, related file.
    await specRow(panel, 'api\\.spec\\.yaml')
      .getByRole('button', { name: /api\.spec\.yaml/ })
      .click();
    const detail = panel.getByRole('region', { name: SPEC });
    const decisions = detail.getByRole('region', { name: 'Decisions (1 proposed)' });
    const proposal = decisions.getByRole('article', { name: 'Retry idempotent requests' });
    await proposal.waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await proposal.textContent()).toContain('2026-04-13');
    expect(await proposal.textContent()).toContain('proposed by reconciliation');
    expect(await proposal.locator('.decision__rationale').innerText()).toBe(
      'The client now retries.\nSee src/api/http.ts for the policy.',
    );
    // A related file the review lists opens there: selected, its diff beside the list.
    const review = detail.getByRole('region', { name: /^Changes of / });
    await review.waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await review.getAttribute('aria-label')).toBe('Changes of src/api/a.ts');
    await proposal.getByRole('button', { name: 'src/api/http.ts' }).click();
    await detail
      .getByRole('region', { name: 'Changes of src/api/http.ts' })
      .getByText('+export const retries = 5;')
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await proposal.getByText('its diff is shown in the review above').waitFor();
    // In the worktree's list, which has no review, it opens under the proposal.
    const listed = worktreeList.getByRole('article', { name: 'Retry idempotent requests' });
    await listed.getByRole('button', { name: 'src/api/http.ts' }).click();
    await listed
      .getByLabel('Diff of src/api/http.ts vs main')
      .getByText('+export const retries = 5;')
      .waitFor({ timeout: UI_TIMEOUT_MS });

    await proposal.scrollIntoViewIfNeeded();
    await screenshot('11-decision-proposals');
    // Accept… shows the spec's change first; Escape cancels, focus goes back, nothing written.
    const acceptButton = proposal.getByRole('button', { name: 'Accept…' });
    await acceptButton.click();
    const dialog = page.getByRole('alertdialog', { name: `Accept into ${SPEC}?` });
    const change = dialog.getByLabel(`What changes in ${SPEC}`);
    await change.waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await focused()).toBe('Cancel');
    await screenshot('11-decision-accept');
    const shown = await change.innerText();
    expect(shown).toContain("+  - date: '2026-04-13'");
    expect(shown).toContain("+    choice: 'Retry idempotent requests'");
    expect(shown).toContain('+      See src/api/http.ts for the policy.');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect(await focused()).toBe('Accept…');
    expect(await read(repo!.root, SPEC)).toBe(API_SPEC);
    expect(await read(repo!.root, LOG_FILE)).toBe(LOG);

    // Accept for real: the files are what `grove decisions accept` writes.
    await acceptButton.click();
    await dialog.getByRole('button', { name: 'Accept and write the spec' }).click();
    // (the section's heading counts 0 proposed now)
    await detail
      .getByRole('status')
      .getByText(/^Accepted “Retry idempotent requests”/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    // The proposal left the list: focus is on its Decisions section, not lost.
    expect(
      await page.evaluate<string>(
        "document.activeElement?.tagName + ' ' + document.activeElement?.querySelector('h4')?.textContent",
      ),
    ).toMatch(/^SECTION Decisions \(\d proposed\)$/);
    await groveDecisions(copy, 'accept', SPEC, '0');
    expect(await read(repo!.root, SPEC)).toBe(await read(copy, SPEC));
    expect(await read(repo!.root, LOG_FILE)).toBe(await read(copy, LOG_FILE));
    // Every added line of the preview is in the spec written.
    const added = shown
      .split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
      .map((line) => line.slice(1));
    expect(await read(repo!.root, SPEC)).toContain(added.join('\n'));
    // The counts follow.
    await expect.poll(() => proposedTotal(panel), { timeout: LIVE_TIMEOUT_MS }).toBe('2');
    await detail.getByRole('region', { name: 'Decisions (0 proposed)' }).waitFor({
      timeout: LIVE_TIMEOUT_MS,
    });
    await expect
      .poll(() => specRow(panel, 'api\\.spec\\.yaml').textContent())
      .not.toContain('proposed');

    // Reject a proposal of the other spec from the worktree's list, with a reason.
    await panel
      .getByRole('region', { name: 'Decisions: 2 proposals awaiting a person' })
      .waitFor({ timeout: LIVE_TIMEOUT_MS });
    // (its heading's count changes with each decision)
    const list = panel.getByRole('region', { name: /^Decisions: .* awaiting a person$/ });
    const drop = list
      .getByRole('region', { name: 'Proposals for .notarai/app.spec.yaml' })
      .getByRole('article', { name: 'Drop the legacy endpoint' });
    await drop.getByRole('button', { name: 'Reject…' }).click();
    const rejectDialog = page.getByRole('alertdialog', {
      name: 'Reject “Drop the legacy endpoint”?',
    });
    await rejectDialog.waitFor();
    expect(await focused()).toBe('Cancel');
    await rejectDialog.getByLabel('Reason (optional)').fill('Still called by the mobile app');
    await rejectDialog.getByRole('button', { name: 'Reject', exact: true }).click();
    await list
      .getByRole('status')
      .getByText(/^Rejected “Drop the legacy endpoint” \(reason: Still called by the mobile app\)/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await groveDecisions(
      copy,
      'reject',
      '.notarai/app.spec.yaml',
      '0',
      '--reason',
      'Still called by the mobile app',
    );
    expect(await read(repo!.root, LOG_FILE)).toBe(await read(copy, LOG_FILE));
    expect(await read(repo!.root, '.notarai/app.spec.yaml')).toBe(APP_SPEC);
    await expect.poll(() => proposedTotal(panel), { timeout: LIVE_TIMEOUT_MS }).toBe('1');
    await panel
      .getByRole('region', { name: 'Decisions: 1 proposal awaiting a person' })
      .getByText('2 settled proposals kept in the log')
      .waitFor({ timeout: LIVE_TIMEOUT_MS });

    // A proposal an agent adds on disk shows without a reload.
    const log = JSON.parse(await read(repo!.root, LOG_FILE)) as { proposals: unknown[] };
    log.proposals.push({
      spec_path: SPEC,
      date: '2026-05-01',
      choice: 'Cap retries at five',
      rationale: 'Bounded load',
      origin: 'agent',
      status: 'proposed',
    });
    await writeFile(path.join(repo!.root, LOG_FILE), JSON.stringify(log, null, 2));
    await detail
      .getByRole('region', { name: 'Decisions (1 proposed)' })
      .getByRole('article', { name: 'Cap retries at five' })
      .waitFor({ timeout: LIVE_TIMEOUT_MS });
    expect(pageErrors).toEqual([]);
  });
});
