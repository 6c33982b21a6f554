// The window as a careful user meets it (issue 27), `grove serve` driven in real Chromium on a
// repository with a committed reconciliation snapshot and a committed .mcp.json:
// - committed files are never changed without asking: Snapshot state shows what the committed
//   snapshot and this machine's cache hold, changes nothing until confirmed, and by default keeps
//   the committed fingerprints; "Add to project .mcp.json" shows the change first, keeps the other
//   entries' text, and leaves no backup in the worktree (it goes to the data directory);
// - one consistent story: an unusable base shows "—" in the tiles and says it is not comparing; a
//   file changed since the snapshot but not vs the base shows its change since the snapshot; a
//   partial mark says what it left; Require token's help matches the switch; after the host stops
//   the header says the servers' state is unknown;
// - fit and flow: at 900 and 800 px every tab is reachable, nothing scrolls sideways (the page, the
//   main pane, a table) and the sidebar shows every branch name whole (feature-a, feature-b,
//   fix/1234-port-reuse-after-restart); axe-core finds no serious or critical violation on any tab
//   in either theme, nor on a diff; the tool console's first call
//   succeeds; the user's tab and worktree survive a switch and a reload; adding a repository by
//   `~/…` selects it and says so, and adding it again says it is already open;
// - the keyboard: a skip link is the first Tab stop and the worktrees come before any Remove
//   button; every confirmation (Clear cache, Snapshot state, Rotate token, Remove repository)
//   opens on Cancel, Escape cancels, and focus goes back to the button that opened it.
// With GROVE_SCREENSHOTS_DIR set, it saves the narrow window (09-narrow-*.png) there.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import {
  addWorktree,
  git,
  makeTempDir,
  makeTempRepo,
  type TempRepo,
} from '../main/testing/temp-repo.ts';
import { serverName } from '../shared/client-configs.ts';
import { ReconcileEngine } from '../main/reconcile/reconcile-engine.ts';
import type { GroveServe } from './support/grove-serve.ts';
import {
  axeViolations,
  checkConfirmation,
  isFocused,
  openGroveUi,
  type GroveUi,
} from './support/grove-ui.ts';

const UI_TIMEOUT_MS = 15_000;
const SCREENSHOTS = process.env['GROVE_SCREENSHOTS_DIR'];

const STATE_FILE = '.notarai/reconciliation_state.json';
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
// A committed .mcp.json in the user's own style: one-line entries, four-space indent.
const MCP_JSON =
  '{\n' +
  '    "mcpServers": {\n' +
  '        "db": { "type": "stdio", "command": "db-mcp", "args": ["--ro"] },\n' +
  '        "web": {"type":"http","url":"http://127.0.0.1:9/mcp"}\n' +
  '    }\n' +
  '}\n';

const TABS = [
  'Server',
  'Clients',
  'Activity',
  'Reconciliation',
  'Coverage',
  'Tools',
  'Chat',
  'Connect',
];
// Worktrees whose names a narrow sidebar used to cut ("feat…", "fix/1…").
const BRANCHES = ['feature-a', 'feature-b', 'fix/1234-port-reuse-after-restart'];

describe('the window as a careful user meets it', () => {
  let repo: TempRepo | undefined;
  let home: string | undefined;
  let ui: GroveUi | undefined;
  let serve: GroveServe | undefined;
  let page: Page;
  let committedState: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    repo = await makeTempRepo({
      '.gitignore': '.notarai/.cache/\n',
      '.notarai/api.spec.yaml': API_SPEC,
      'src/a.ts': 'export const a = 1;\n',
      'src/b.ts': 'export const b = 1;\n',
      '.mcp.json': MCP_JSON,
    });
    // The committed snapshot: every file reconciled on another machine, then this machine's cache
    // emptied (a fresh clone). Then src/b.ts changes in a commit of its own: the same as the base
    // (main), changed since the snapshot.
    const engine = new ReconcileEngine({ root: repo.root });
    await engine.markReconciled(['src/a.ts', 'src/b.ts', '.notarai/api.spec.yaml']);
    await engine.snapshotState();
    await engine.clearCache();
    engine.close();
    await git(repo.root, 'add', '-A');
    await git(repo.root, 'commit', '-q', '-m', 'reconciled');
    await writeFile(path.join(repo.root, 'src/b.ts'), 'export const b = 2;\n');
    await git(repo.root, 'commit', '-q', '-am', 'b changes');
    committedState = await readFile(path.join(repo.root, STATE_FILE), 'utf8');
    for (const branch of BRANCHES) await addWorktree(repo, branch);

    // A second repository in a home of its own, to be added as ~/other.
    home = await makeTempDir('grove-home-');
    const other = await makeTempRepo({ 'x.txt': 'x\n' });
    await git(home, 'clone', '-q', other.root, path.join(home, 'other'));
    await other.cleanup();

    ui = await openGroveUi({ repos: [repo.root], env: { HOME: home }, pageErrors });
    ({ serve, page } = ui);
    if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await ui?.close();
    await repo?.cleanup();
    if (home) await rm(home, { recursive: true, force: true });
  });

  const sidebar = (): Locator =>
    page.getByRole('navigation', { name: 'Repositories and worktrees' });
  const region = (branch = 'main'): Locator =>
    page.getByRole('main').getByRole('region', { name: branch, exact: true });

  async function openTab(name: string, branch = 'main'): Promise<Locator> {
    await region(branch)
      .getByRole('tab', { name: new RegExp(`^${name}`) })
      .click();
    return region(branch).getByRole('tabpanel');
  }

  async function waitRunning(): Promise<void> {
    await sidebar().getByRole('button', { name: 'main', exact: true }).click();
    const panel = await openTab('Server');
    await panel.getByText(/^Running on port \d+$/).waitFor({ timeout: UI_TIMEOUT_MS });
  }

  /** The page, the main pane and any table scroll sideways by this many pixels (0: they do not). */
  const sidewaysScroll = (): Promise<number> =>
    page.evaluate(`Math.max(0, ...[
      document.scrollingElement, document.querySelector('.layout__main'),
      ...document.querySelectorAll('.table-wrap')].map((e) => e.scrollWidth - e.clientWidth))`) as Promise<number>;

  /** The sidebar's branch names that do not show whole (cut, or wider than their box). */
  const cutNames = (): Promise<string[]> =>
    page.evaluate(`[...document.querySelectorAll('.worktree-item__name')]
      .filter((e) => e.scrollWidth > e.clientWidth || e.getBoundingClientRect().right >
        document.querySelector('.sidebar').getBoundingClientRect().right)
      .map((e) => e.textContent)`) as Promise<string[]>;

  test('at 900 and 800 px every tab is reachable, names show whole and nothing scrolls sideways; axe passes in both themes', async () => {
    await waitRunning();
    const violations: string[] = [];
    for (const width of [900, 800]) {
      await page.setViewportSize({ width, height: 700 });
      for (const branch of BRANCHES) {
        await sidebar().getByRole('button', { name: branch, exact: true }).waitFor();
        expect(
          await sidebar().getByText(branch, { exact: true }).isVisible(),
          `${branch} at ${width} px`,
        ).toBe(true);
      }
      expect(await cutNames(), `names cut at ${width} px`).toEqual([]);
      for (const name of TABS) {
        const tab = region().getByRole('tab', { name: new RegExp(`^${name}`) });
        const box = await tab.boundingBox();
        expect(box, `${name} tab at ${width} px`).not.toBeNull();
        expect(box!.x + box!.width, `${name} tab fits at ${width} px`).toBeLessThanOrEqual(width);
        await tab.click();
        await region().getByRole('tabpanel').waitFor();
        expect(await sidewaysScroll(), `${name} at ${width} px`).toBeLessThanOrEqual(0);
        if (width === 900) {
          for (const scheme of ['light', 'dark'] as const) {
            await page.emulateMedia({ colorScheme: scheme });
            for (const failure of await axeViolations(page)) {
              violations.push(`${name}, ${scheme}: ${failure}`);
            }
          }
          await page.emulateMedia({ colorScheme: 'light' });
        }
      }
    }
    expect(violations).toEqual([]);
    await openTab('Reconciliation');
    await page.setViewportSize({ width: 900, height: 700 });
    if (SCREENSHOTS) {
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.screenshot({ path: path.join(SCREENSHOTS, `09-narrow-${scheme}.png`) });
      }
      await page.emulateMedia({ colorScheme: 'light' });
    }
    await page.setViewportSize({ width: 1100, height: 800 });
  });

  test("Require token's help says what the switch's position means", async () => {
    const panel = await openTab('Server');
    await panel.getByText(/^On: a client must send this worktree's token/).waitFor();
  });

  test("the tool console's first call succeeds and a file's content reads as lines", async () => {
    const tools = await openTab('Tools');
    await tools.getByRole('button', { name: /^get_spec_diff/ }).click();
    const args = tools.getByLabel('Arguments (JSON)');
    expect(JSON.parse(await args.inputValue())).toEqual({
      spec_path: '.notarai/api.spec.yaml',
      base_branch: 'main',
    });
    await tools.getByRole('button', { name: /^read_file/ }).click();
    expect(JSON.parse(await args.inputValue())).toEqual({ path: 'README.md' });
    await tools.getByRole('button', { name: 'Call read_file' }).click();
    const content = tools.getByLabel('Tool result: content', { exact: true });
    await content.waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await content.textContent()).toBe('# test repo\n');
  });

  test('the Reconciliation and Coverage tabs give one count of files changed since reconciled', async () => {
    // The repository has a committed snapshot, and this machine marked nothing: NotarAI's rule
    // (grove check: the hash cache alone) counts otherwise than the window's (the cache, then
    // the snapshot), and the Coverage tab says so in one sentence.
    const panel = await openTab('Reconciliation');
    const tile = panel.locator('.reconcile-totals__item', {
      has: page.getByText('Changed since reconciled', { exact: true }),
    });
    await tile.waitFor({ timeout: UI_TIMEOUT_MS });
    const changed = Number((await tile.locator('dd').textContent())?.replace(/,/g, ''));
    expect(changed).toBeGreaterThan(0);
    const coverage = await openTab('Coverage');
    const group = coverage.getByRole('region', { name: /^Changed since reconciliation/ });
    await group.waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await group.getByRole('listitem').count()).toBe(changed);
    // And it says, in one sentence, what grove check here reports instead.
    await coverage
      .getByRole('note')
      .getByText(/; `grove check` here reports (none|[\d,]+): like NotarAI/)
      .waitFor();
  });

  test('a file changed since the snapshot but not vs the base shows its change since the snapshot', async () => {
    const panel = await openTab('Reconciliation');
    await panel.getByRole('button', { name: /\.notarai\/api\.spec\.yaml/ }).click();
    const detail = panel.getByRole('region', { name: '.notarai/api.spec.yaml' });
    const files = detail.getByRole('tree', { name: 'Files of .notarai/api.spec.yaml' });
    const b = files.getByRole('treeitem', { name: 'src/b.ts, same as the base' });
    await b.click({ timeout: UI_TIMEOUT_MS });
    const diff = detail.getByLabel('Diff of src/b.ts');
    await diff.waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await diff.textContent()).toContain('+export const b = 2;');
    await detail
      .getByText(/Its change since the committed snapshot \(commit [0-9a-f]{10}\)/)
      .waitFor();
    // The diff's colours read in both themes, like the rest of the tab.
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(page), `the diff, ${scheme}`).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // Viewed, it is every changed file: the mark takes the spec file with it.
    await files.getByRole('checkbox', { name: 'Viewed src/b.ts' }).check();
    await detail.getByText(/the spec file is marked with them/).waitFor();
    await detail.getByRole('button', { name: 'Mark 1 viewed reconciled' }).click();
    await detail
      .getByRole('status')
      .getByText(/^Marked 2 files reconciled\./)
      .waitFor({ timeout: UI_TIMEOUT_MS });
  });

  test('an unusable base: the tiles show — like the table, and the form says it is not comparing', async () => {
    const panel = await openTab('Reconciliation');
    const form = panel.getByRole('form', { name: 'Reconciliation base' });
    await form.getByRole('textbox', { name: 'Base branch' }).fill('nope-no-such-branch');
    await form.getByRole('button', { name: 'Apply base branch' }).click();
    await form
      .getByText(/^Not comparing: nope-no-such-branch cannot be used/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    const tile = (label: string) =>
      panel.locator('.reconcile-totals__item', { has: page.getByText(label, { exact: true }) });
    expect(await tile('Affected vs base').locator('dd').textContent()).toBe('—');
    expect(await tile('Changed vs base').locator('dd').textContent()).toBe('—');
    await form.getByRole('button', { name: 'Use the default branch' }).click();
    await form.getByText(/^Comparing against main/).waitFor({ timeout: UI_TIMEOUT_MS });
  });

  test('a skip link comes first, then the worktrees; each confirmation opens on Cancel, Escape cancels, focus returns', async () => {
    await page.reload();
    await sidebar().getByRole('button', { name: 'main', exact: true }).waitFor({
      timeout: UI_TIMEOUT_MS,
    });
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to the worktree' });
    expect(await isFocused(skip)).toBe(true);
    await page.keyboard.press('Tab');
    // The first worktree, not the repository's Remove button.
    expect(await isFocused(sidebar().getByRole('button', { name: 'main', exact: true }))).toBe(
      true,
    );
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    expect(await isFocused(page.getByRole('main'))).toBe(true);

    const reconciliation = await openTab('Reconciliation');
    await checkConfirmation(
      page,
      reconciliation.getByRole('button', { name: 'Clear cache' }),
      'Clear the hash cache?',
    );
    await checkConfirmation(
      page,
      reconciliation.getByRole('button', { name: 'Snapshot state…' }),
      `Write ${STATE_FILE}?`,
    );
    expect(await readFile(path.join(repo!.root, STATE_FILE), 'utf8')).toBe(committedState);
    const server = await openTab('Server');
    await checkConfirmation(
      page,
      server.getByRole('button', { name: 'Rotate token' }),
      'Rotate the token?',
    );
    await checkConfirmation(
      page,
      sidebar().getByRole('button', { name: 'Remove repository repo' }),
      'Remove repo?',
    );
    await sidebar().getByRole('button', { name: 'main', exact: true }).waitFor();
  });

  test('Snapshot state changes the committed file only when confirmed, keeping the committed fingerprints by default', async () => {
    const panel = await openTab('Reconciliation');
    await panel.getByRole('button', { name: 'Snapshot state…' }).click();
    const ask = page.getByRole('alertdialog', { name: `Write ${STATE_FILE}?` });
    await ask.waitFor({ timeout: UI_TIMEOUT_MS });
    // The snapshot holds 3 fingerprints (2 files, the spec); this machine's cache holds 2 (b and
    // the spec, marked with it).
    expect(await ask.textContent()).toMatch(/The snapshot there now holds 3 fingerprints;/);
    expect(await ask.textContent()).toMatch(/this machine's cache holds 2 fingerprints\./);
    expect(
      await ask.getByRole('radio', { name: /^Keep the committed fingerprints/ }).isChecked(),
    ).toBe(true);
    await ask.getByText(/drops 1 committed fingerprint this machine never reconciled/).waitFor();
    expect(await readFile(path.join(repo!.root, STATE_FILE), 'utf8')).toBe(committedState);
    await ask.getByRole('button', { name: 'Cancel' }).click();
    expect(await readFile(path.join(repo!.root, STATE_FILE), 'utf8')).toBe(committedState);

    await panel.getByRole('button', { name: 'Snapshot state…' }).click();
    await ask.getByRole('button', { name: 'Write snapshot' }).click();
    await panel
      .getByRole('status')
      .getByText(
        /^Snapshot written to .*reconciliation_state\.json \(2 files, 1 spec.*1 committed fingerprint kept/,
      )
      .waitFor({ timeout: UI_TIMEOUT_MS });
    type State = {
      file_fingerprints: Record<string, unknown>;
      spec_fingerprints: Record<string, unknown>;
    };
    const before = JSON.parse(committedState) as State;
    const after = JSON.parse(await readFile(path.join(repo!.root, STATE_FILE), 'utf8')) as State;
    expect(after.spec_fingerprints).toEqual(before.spec_fingerprints);
    expect(after.file_fingerprints['src/a.ts']).toEqual(before.file_fingerprints['src/a.ts']);
    expect(Object.keys(after.file_fingerprints)).toEqual(['src/a.ts', 'src/b.ts']);
  });

  test('Add to project .mcp.json shows the change first, keeps the other entries, leaves no backup in the worktree', async () => {
    const mcpJson = path.join(repo!.root, '.mcp.json');
    const connect = await openTab('Connect');
    await connect.getByRole('button', { name: 'Add to project .mcp.json…' }).click();
    const preview = connect.getByRole('region', { name: /^Change .*\.mcp\.json\?$/ });
    await preview.waitFor({ timeout: UI_TIMEOUT_MS });
    // The worktree's entry name, as the Connect tab derives it (repository, branch, path hash).
    const name = serverName({ branch: 'main', path: serve!.worktree('main').path, repo: 'repo' });
    const diff = await preview.getByLabel('What changes in .mcp.json').textContent();
    expect(diff).toContain(`+        "${name}": {`);
    expect(diff).not.toContain('-        "db"');
    expect(await readFile(mcpJson, 'utf8')).toBe(MCP_JSON);
    await preview.getByRole('button', { name: 'Cancel' }).click();
    expect(await readFile(mcpJson, 'utf8')).toBe(MCP_JSON);

    await connect.getByRole('button', { name: 'Add to project .mcp.json…' }).click();
    await connect.getByRole('button', { name: 'Write .mcp.json' }).click();
    await connect
      .getByRole('status')
      .getByText(new RegExp(`^Added ${name} to .*\\.mcp\\.json \\(the old file is backed up at `))
      .waitFor({ timeout: UI_TIMEOUT_MS });
    const written = await readFile(mcpJson, 'utf8');
    expect(written).toContain(
      '        "db": { "type": "stdio", "command": "db-mcp", "args": ["--ro"] },\n',
    );
    expect(written).toContain('        "web": {"type":"http","url":"http://127.0.0.1:9/mcp"},\n');
    expect(JSON.parse(written).mcpServers[name].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    // Git sees the two files the user changed on purpose, nothing else (no backup beside them).
    const status = (await git(repo!.root, 'status', '--porcelain')).split('\n').filter(Boolean);
    expect(status.sort()).toEqual([' M .mcp.json', ` M ${STATE_FILE}`]);
    const backups = await readdir(path.join(serve!.dataDir, 'config-backups'));
    expect(backups).toHaveLength(1);
    expect(await readFile(path.join(serve!.dataDir, 'config-backups', backups[0]!), 'utf8')).toBe(
      MCP_JSON,
    );
  });

  test("the user's place survives a worktree switch and a reload; ~/other is added, selected, and known", async () => {
    await openTab('Reconciliation');
    const form = sidebar().getByRole('form', { name: 'Add a repository' });
    await form.getByLabel('Repository path').fill('~/other');
    await form.getByRole('button', { name: 'Add repository' }).click();
    await form
      .getByRole('status')
      .getByText(/^Added other \(1 worktree\); it is selected\.$/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    // The new repository's worktree is shown, on the tab the user was on.
    await region()
      .getByRole('tab', { name: /^Reconciliation/, selected: true })
      .waitFor();
    expect(await region().locator('.worktree-view__path').textContent()).toBe(
      path.join(home!, 'other'),
    );
    await form.getByLabel('Repository path').fill(path.join(home!, 'other'));
    await form.getByRole('button', { name: 'Add repository' }).click();
    await form
      .getByRole('status')
      .getByText(/^other is already open; it is selected\.$/)
      .waitFor({ timeout: UI_TIMEOUT_MS });

    await page.reload();
    await region()
      .getByRole('tab', { name: /^Reconciliation/, selected: true })
      .waitFor({
        timeout: UI_TIMEOUT_MS,
      });
    expect(await region().locator('.worktree-view__path').textContent()).toBe(
      path.join(home!, 'other'),
    );

    // Removing it takes a deliberate Tab from Cancel to Remove.
    const remove = sidebar().getByRole('button', { name: 'Remove repository other' });
    await remove.focus();
    await page.keyboard.press('Enter');
    const ask = page.getByRole('alertdialog', { name: 'Remove other?' });
    await ask.waitFor();
    await page.keyboard.press('Tab');
    expect(await isFocused(ask.getByRole('button', { name: 'Remove', exact: true }))).toBe(true);
    await page.keyboard.press('Enter');
    await sidebar()
      .getByRole('region', { name: 'other' })
      .waitFor({ state: 'detached', timeout: UI_TIMEOUT_MS });
    expect(pageErrors).toEqual([]);
  });

  test("after the host stops, the header says the servers' state is unknown", async () => {
    await openTab('Server');
    await page.getByText(/^\d+ of 4 servers running/).waitFor({ timeout: UI_TIMEOUT_MS });
    await serve!.stop();
    await page
      .getByText(/^4 servers' state unknown: the host cannot be reached$/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    // What to do, not only what is wrong.
    await page
      .getByRole('alert')
      .getByText(/restart grove serve .* and open the URL it prints/)
      .waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await page.getByRole('button', { name: 'Copy SSE URL' }).isDisabled()).toBe(true);
    expect(await page.getByText(/servers running/).count()).toBe(0);
    await region().getByText('state unknown', { exact: true }).waitFor();
    expect(await page.locator('.pill--running').count()).toBe(0);
  });
});
