// The window end to end: `grove serve` on real repositories, driven in real Chromium. A repository
// added through the sidebar comes up running; an SDK client shows in Clients by name and its tool
// call in Activity; the Tools tab calls list_directory through the host's tool console; the Claude
// Desktop snippet (Grove's bridge) copies and works as Claude Desktop starts it, the mcp-remote one
// points at the right port, and "Add to Claude Desktop" shows the change first, then keeps the
// other server and makes a backup; the Cursor entry and its token variable line (the worktree's
// own) work as copied; the "Allow just tasks" switch offers and takes back the task tools;
// a rotated token refuses the old one. With a client connected, Stop asks first and says how many
// it cuts off; the Clients and Activity tabs pass axe-core in both themes; Activity with 1,000
// calls says older ones are dropped and finds one by a text search. With GROVE_SCREENSHOTS_DIR set,
// it also saves a screenshot of each view (light and dark) there.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { connectClient, rawRequest } from '../main/testing/mcp-clients.ts';
import { resolveCursorLike } from '../main/testing/client-config-resolvers.ts';
import { serverName, tokenEnvVar } from '../shared/client-configs.ts';
import { randomFirstPort, waitFor } from '../main/testing/net.ts';
import {
  addWorktree,
  git,
  makeTempDir,
  makeTempRepo,
  type TempRepo,
} from '../main/testing/temp-repo.ts';
import { collectPageErrors, launchChromium, type LaunchedChromium } from './support/chromium.ts';
import { axeViolations, checkConfirmation } from './support/grove-ui.ts';
import { startGroveServe, type GroveServe } from './support/grove-serve.ts';

const UI_TIMEOUT_MS = 15_000;
const SCREENSHOTS = process.env['GROVE_SCREENSHOTS_DIR'];

describe('the Grove window in Chromium', () => {
  let served: TempRepo | undefined;
  let added: TempRepo | undefined;
  let configDir: string | undefined;
  let claudeConfig: string;
  let serve: GroveServe | undefined;
  let chromium: LaunchedChromium | undefined;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    served = await makeTempRepo({ 'src/app.ts': 'export {};\n' });
    await addWorktree(served, 'feature-x');
    added = await makeTempRepo({ 'docs/guide.md': '# guide\n', 'notes.txt': 'hello\n' });
    await git(added.root, 'checkout', '-q', '-b', 'trunk');
    await addWorktree(added, 'feature-y');
    configDir = await makeTempDir('grove-claude-config-');
    claudeConfig = path.join(configDir, 'claude_desktop_config.json');
    await writeFile(
      claudeConfig,
      JSON.stringify({ mcpServers: { other: { command: 'other-mcp', args: [] } } }, null, 2),
    );
    serve = await startGroveServe({
      repos: [served.root],
      env: {
        GROVE_FIRST_PORT: String(randomFirstPort()),
        GROVE_CLAUDE_DESKTOP_CONFIG: claudeConfig,
      },
    });
    chromium = await launchChromium();
    await chromium.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(serve.ui).origin,
    });
    page = await chromium.context.newPage();
    collectPageErrors(page, pageErrors);
    await page.goto(serve.ui);
    if (SCREENSHOTS) await mkdir(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await chromium?.close();
    await serve?.stop();
    await served?.cleanup();
    await added?.cleanup();
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });

  const sidebar = (): Locator =>
    page.getByRole('navigation', { name: 'Repositories and worktrees' });

  /** Shows a worktree on its Server tab (the window otherwise keeps the tab the user was on). */
  async function showWorktree(branch: string): Promise<Locator> {
    await sidebar().getByRole('button', { name: branch, exact: true }).click();
    const region = page.getByRole('main').getByRole('region', { name: branch, exact: true });
    await region.waitFor({ timeout: UI_TIMEOUT_MS });
    await region.getByRole('tab', { name: /^Server/ }).click();
    return region;
  }

  async function openTab(region: Locator, name: string): Promise<Locator> {
    await region.getByRole('tab', { name: new RegExp(`^${name}`) }).click();
    return region.getByRole('tabpanel');
  }

  /** Saves the view at 1280 px (`name-light.png`) and 900 px (`name-900-light.png`), both themes. */
  async function screenshot(name: string): Promise<void> {
    if (!SCREENSHOTS) return;
    const viewport = page.viewportSize();
    for (const [width, suffix] of [
      [1280, ''],
      [900, '-900'],
    ] as const) {
      await page.setViewportSize({ width, height: 800 });
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.screenshot({ path: path.join(SCREENSHOTS, `${name}${suffix}-${scheme}.png`) });
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    if (viewport) await page.setViewportSize(viewport);
  }

  /** The current token of a worktree, read from the Server tab (revealed, then hidden again). */
  async function tokenOf(region: Locator): Promise<string> {
    const panel = await openTab(region, 'Server');
    await panel.getByRole('button', { name: 'Reveal token' }).click();
    const token = await panel.getByLabel('Token', { exact: true }).textContent();
    await panel.getByRole('button', { name: 'Hide token' }).click();
    return token ?? '';
  }

  function portOf(text: string): number {
    return Number(/port (\d+)/.exec(text)?.[1]);
  }

  test('adds a repository through the sidebar and sees its worktrees running', async () => {
    await sidebar().getByRole('button', { name: 'feature-x', exact: true }).waitFor();
    await screenshot('01-server');

    await sidebar().getByLabel('Repository path').fill(added!.root);
    await sidebar().getByRole('button', { name: 'Add repository' }).click();
    for (const branch of ['trunk', 'feature-y']) {
      const region = await showWorktree(branch);
      await region.getByText(/^Running on port \d+$/).waitFor({ timeout: UI_TIMEOUT_MS });
    }
    // A path that is no repository is refused with the host's reason, in place.
    await sidebar().getByLabel('Repository path').fill(configDir!);
    await sidebar().getByRole('button', { name: 'Add repository' }).click();
    await sidebar()
      .getByRole('alert')
      .getByText(/not a git repository|git/i)
      .waitFor();
  });

  test('an SDK client shows in Clients by name, and its tool call in Activity', async () => {
    const region = await showWorktree('feature-y');
    const status = await region.getByText(/^Running on port \d+$/).textContent();
    const port = portOf(status ?? '');
    const token = await tokenOf(region);
    const { client } = await connectClient(port, 'legacy-http', token);
    try {
      const clients = await openTab(region, 'Clients');
      const row = clients.getByRole('row', { name: /grove-test-client/ });
      await row.waitFor({ timeout: UI_TIMEOUT_MS });
      // Its GET stream is open: connected.
      await expect.poll(() => row.textContent()).toMatch(/1\.2\.3.*Streamable HTTP.*Connected/);

      await client.callTool({ name: 'list_directory', arguments: { path: 'docs' } });
      await expect.poll(() => row.getByRole('cell').nth(3).textContent()).toBe('1');
      await screenshot('02-clients');

      const activity = await openTab(region, 'Activity');
      const call = activity.getByRole('button', { name: /list_directory.*grove-test-client/ });
      await call.waitFor({ timeout: UI_TIMEOUT_MS });
      await call.click();
      const details = activity.getByRole('region', { name: /^list_directory at/ });
      await details.getByText('Succeeded').waitFor();
      await details.getByText(/"path": "docs"/).waitFor();
      await activity.getByLabel('Tool', { exact: true }).selectOption('list_directory');
      await activity.getByText('1 of 1 calls').waitFor();
      await screenshot('03-activity');
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        expect(await axeViolations(page), `Activity, ${scheme}`).toEqual([]);
        await openTab(region, 'Clients');
        expect(await axeViolations(page), `Clients, ${scheme}`).toEqual([]);
        await openTab(region, 'Activity');
      }
      await page.emulateMedia({ colorScheme: 'light' });

      // Stop would cut the client off: it says so and asks, on Cancel; Escape leaves it running.
      const server = await openTab(region, 'Server');
      const ask = await checkConfirmation(
        page,
        server.getByRole('button', { name: 'Stop', exact: true }),
        'Stop the server?',
      );
      await server.getByRole('button', { name: 'Stop', exact: true }).click();
      expect(await ask.textContent()).toContain('1 client is connected now');
      await screenshot('10-confirm-stop');
      await page.keyboard.press('Escape');
      await ask.waitFor({ state: 'hidden' });
      expect(await region.getByText(/^Running on port \d+$/).count()).toBe(1);
    } finally {
      await client.close();
    }
  });

  test('Activity with 1,000 calls says older ones are dropped and finds one by a text search', async () => {
    const region = await showWorktree('trunk');
    const status = await region.getByText(/^Running on port \d+$/).textContent();
    const { client } = await connectClient(
      portOf(status ?? ''),
      'modern-http',
      await tokenOf(region),
    );
    try {
      // 1,000 reads of files that do not exist (each a failed call with its own path), 25 at a time.
      for (let batch = 0; batch < 40; batch += 1) {
        await Promise.all(
          Array.from({ length: 25 }, (_, i) =>
            client.callTool({
              name: 'read_file',
              arguments: { path: `absent-${batch * 25 + i}.txt` },
            }),
          ),
        );
      }
      const activity = await openTab(region, 'Activity');
      await activity
        .getByText(
          /^1,000 of 1,000 calls \(Grove keeps the newest 1,000; older calls are dropped\)$/,
        )
        .waitFor({ timeout: UI_TIMEOUT_MS });
      // Only the rows in sight are drawn; the keyboard still reaches the oldest call.
      expect(await activity.locator('.calls li').count()).toBeLessThan(100);
      const rows = activity.getByRole('list', { name: 'Tool calls' });
      await rows.getByRole('button').first().focus();
      await page.keyboard.press('End');
      await expect
        .poll(() => page.evaluate('document.activeElement?.textContent ?? ""'))
        .toMatch(/absent-(\d|1\d|2[0-4])\.txt/);
      await activity.getByLabel('Search', { exact: true }).fill('absent-777.txt');
      await activity.getByText(/^1 of 1,000 calls/).waitFor();
      const found = activity.getByRole('button', { name: /read_file/ });
      expect(await found.count()).toBe(1);
      expect(await found.textContent()).toContain('absent-777.txt');
      await activity.getByLabel('Search', { exact: true }).fill('no such text anywhere');
      await activity
        .getByText('No calls match “no such text anywhere” with these filters.')
        .waitFor();
      await activity.getByLabel('Search', { exact: true }).fill('');
    } finally {
      await client.close();
    }
  });

  test('calls list_directory from the Tools tab and shows the result', async () => {
    const region = await showWorktree('feature-y');
    const tools = await openTab(region, 'Tools');
    await tools.getByRole('button', { name: /^list_directory/ }).click();
    await tools.getByRole('heading', { name: 'list_directory' }).waitFor();

    // Arguments are checked against the schema before they are sent.
    const args = tools.getByLabel('Arguments (JSON)');
    await args.fill('{"path": 42}');
    await tools.getByRole('button', { name: 'Call list_directory' }).click();
    await tools
      .getByRole('alert')
      .getByText(/must be string/)
      .waitFor();

    // The form generated from the schema edits the same arguments.
    const form = tools.getByRole('group', { name: 'Arguments' });
    await form.getByLabel('path', { exact: false }).first().fill('.');
    expect(JSON.parse(await args.inputValue())).toMatchObject({ path: '.' });
    await tools.getByRole('button', { name: 'Call list_directory' }).click();
    const result = tools.getByLabel('Tool result');
    await result.getByText(/notes\.txt/).waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await result.textContent()).toContain('docs');
    await screenshot('04-tools');

    // A call the schema refuses: its issues, and no earlier result left under them as if it
    // answered; sent anyway on purpose, the server's own refusal shows as this call's result.
    await args.fill('{"path": 42}');
    await tools.getByRole('button', { name: 'Call list_directory' }).click();
    await tools
      .getByRole('alert')
      .getByText(/must be string/)
      .waitFor();
    expect(await tools.getByLabel('Tool result').count()).toBe(0);
    await tools.getByRole('button', { name: 'Send anyway' }).click();
    const refused = tools.getByRole('region', { name: 'Tool error' });
    await refused.getByText(/Input validation error/).waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await refused.textContent()).toContain('{"path":42}');
    // Both calls in the history, newest first; the first one's arguments load again.
    const history = tools.getByRole('region', { name: 'Earlier calls from this window' });
    const rows = history.getByRole('listitem');
    expect(await rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain('error');
    await rows.nth(1).getByRole('button', { name: 'Load arguments' }).click();
    expect(JSON.parse(await args.inputValue())).toEqual({ path: '.' });

    // The console is Grove's own window: a note under the Clients table, not one of its rows.
    const clients = await openTab(region, 'Clients');
    await clients.getByText(/This window is connected too/).waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await clients.getByRole('row', { name: /Grove \(this window\)/ }).count()).toBe(0);
  });

  test('copies the Claude Desktop config and adds it to the config file', async () => {
    const region = await showWorktree('feature-x');
    const status = await region.getByText(/^Running on port \d+$/).textContent();
    const port = portOf(status ?? '');
    const token = await tokenOf(region);
    const connect = await openTab(region, 'Connect');
    await connect
      .getByRole('button', { name: 'Copy Claude Desktop: claude_desktop_config.json', exact: true })
      .click();
    await connect
      .getByRole('button', { name: 'Copy Claude Desktop: claude_desktop_config.json', exact: true })
      .getByText('Copied')
      .waitFor();
    const copied = JSON.parse(await page.evaluate<string>('navigator.clipboard.readText()'));
    // The entry's name, as the Connect tab derives it (repository, branch, a hash of the path).
    const name = serverName({
      branch: 'feature-x',
      path: serve!.worktree('feature-x').path,
      repo: 'repo',
    });
    const entry = copied.mcpServers[name];
    // Grove's own bridge: no token in the file. Started exactly as Claude Desktop starts it, it
    // reaches this worktree through the running host.
    expect(entry.env).toBeUndefined();
    expect(entry.args.slice(-4)).toEqual([
      'bridge',
      '--data-dir',
      serve!.dataDir,
      serve!.worktree('feature-x').path,
    ]);
    const bridge = new Client({ name: 'claude-ai', version: '0.1.0' });
    await bridge.connect(new StdioClientTransport({ command: entry.command, args: entry.args }));
    try {
      const listed = await bridge.callTool({ name: 'list_directory', arguments: { path: 'src' } });
      expect(JSON.stringify(listed.structuredContent)).toContain('app.ts');
    } finally {
      await bridge.close();
    }

    // The mcp-remote form, kept as the alternative.
    const alternative = 'Copy Claude Desktop: claude_desktop_config.json, through mcp-remote';
    await connect.getByRole('button', { name: alternative }).click();
    await connect.getByRole('button', { name: alternative }).getByText('Copied').waitFor();
    const remote = JSON.parse(await page.evaluate<string>('navigator.clipboard.readText()'))
      .mcpServers[name];
    expect(remote.command).toBe('npx');
    expect(remote.args).toEqual([
      '-y',
      'mcp-remote',
      `http://127.0.0.1:${port}/sse`,
      '--transport',
      'sse-only',
      '--header',
      'Authorization:${GROVE_AUTH}',
    ]);
    expect(remote.env).toEqual({ GROVE_AUTH: `Bearer ${token}` });
    await screenshot('05-connect');

    // "Add to Claude Desktop…" shows the change first and writes nothing until confirmed.
    await connect.getByRole('button', { name: 'Add to Claude Desktop…' }).click();
    const preview = connect.getByRole('region', {
      name: /^Change .*claude_desktop_config\.json\?$/,
    });
    await preview.waitFor({ timeout: UI_TIMEOUT_MS });
    const diff = await preview
      .getByLabel('What changes in claude_desktop_config.json')
      .textContent();
    expect(diff).toContain(`+    "${name}": {`);
    expect(diff).not.toMatch(/^-/m);
    expect(JSON.parse(await readFile(claudeConfig, 'utf8'))).toEqual({
      mcpServers: { other: { command: 'other-mcp', args: [] } },
    });
    await preview.getByRole('button', { name: 'Write claude_desktop_config.json' }).click();
    await connect.getByRole('status').getByText(`Added ${name} to`, { exact: false }).waitFor({
      timeout: UI_TIMEOUT_MS,
    });
    const written = JSON.parse(await readFile(claudeConfig, 'utf8'));
    expect(Object.keys(written.mcpServers).sort()).toEqual([name, 'other'].sort());
    expect(written.mcpServers[name]).toEqual(entry);
    const backups = (await readdir(configDir!)).filter((file) => file.includes('grove-backup'));
    expect(backups).toHaveLength(1);
    expect(JSON.parse(await readFile(path.join(configDir!, backups[0]!), 'utf8'))).toEqual({
      mcpServers: { other: { command: 'other-mcp', args: [] } },
    });

    // Cursor's entry reads the worktree's own variable; the tab's line for a terminal sets it.
    const variable = tokenEnvVar({
      branch: 'feature-x',
      path: serve!.worktree('feature-x').path,
      repo: 'repo',
    });
    const copy = async (label: string): Promise<string> => {
      await connect.getByRole('button', { name: label, exact: true }).click();
      await connect.getByRole('button', { name: label, exact: true }).getByText('Copied').waitFor();
      return page.evaluate<string>('navigator.clipboard.readText()');
    };
    const cursor = await copy('Copy Cursor: mcp.json');
    expect(JSON.parse(cursor).mcpServers[name].headers).toEqual({
      Authorization: `Bearer \${env:${variable}}`,
    });
    const line = await copy(`Copy ${variable}: terminal clients`);
    expect(line).toBe(`export ${variable}=${token}`);
    const resolved = resolveCursorLike(cursor, name, { [variable]: token }, 'url');
    expect(resolved.url).toBe(`http://127.0.0.1:${port}/mcp`);
    const cursorClient = new Client({ name: 'cursor-like', version: '0.1.0' });
    await cursorClient.connect(
      new StreamableHTTPClientTransport(new URL(resolved.url), {
        requestInit: { headers: resolved.headers },
      }),
    );
    try {
      expect((await cursorClient.listTools()).tools.map((t) => t.name)).toContain('read_file');
    } finally {
      await cursorClient.close();
    }
  });

  test('every tab fits the window at 1024 and 1440 px, light and dark', async () => {
    const region = await showWorktree('feature-y');
    // Wider than the window: the page itself, or a table that needs a scrollbar.
    const overflowing = (): Promise<string[]> =>
      page.evaluate<string[]>(`(() => {
        const problems = [];
        const root = document.documentElement;
        if (root.scrollWidth > root.clientWidth + 1) {
          problems.push('page ' + root.scrollWidth + ' > ' + root.clientWidth);
        }
        for (const wrap of document.querySelectorAll('[role="tabpanel"] .table-wrap')) {
          if (wrap.scrollWidth > wrap.clientWidth + 1) {
            const label = wrap.querySelector('table')?.getAttribute('aria-label') ?? 'table';
            problems.push(label + ' ' + wrap.scrollWidth + ' > ' + wrap.clientWidth);
          }
        }
        return problems;
      })()`);
    const problems: string[] = [];
    try {
      for (const width of [1024, 1440]) {
        await page.setViewportSize({ width, height: 800 });
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          for (const tab of [
            'Server',
            'Clients',
            'Activity',
            'Reconciliation',
            'Tools',
            'Chat',
            'Connect',
          ]) {
            await openTab(region, tab);
            for (const problem of await overflowing())
              problems.push(`${width} ${scheme} ${tab}: ${problem}`);
          }
        }
      }
    } finally {
      await page.setViewportSize({ width: 1100, height: 800 });
      await page.emulateMedia({ colorScheme: 'light' });
    }
    expect(problems).toEqual([]);
  });

  test('the Allow just tasks switch offers the task tools to a connected client, and takes them back', async () => {
    const region = await showWorktree('feature-x');
    const server = await openTab(region, 'Server');
    const status = await region.getByText(/^Running on port \d+$/).textContent();
    const { client } = await connectClient(
      portOf(status ?? ''),
      'legacy-http',
      await tokenOf(region),
    );
    try {
      const offered = async (): Promise<boolean> =>
        (await client.listTools()).tools.some((tool) => tool.name === 'run_just_task');
      expect(await offered()).toBe(false);
      // The switch is its label (the checkbox itself is drawn by CSS), as a user clicks it.
      const label = server.getByText('Allow just tasks', { exact: true });
      const toggle = server.getByRole('switch', { name: /Allow just tasks/ });
      await label.click();
      await waitFor(offered, 'run_just_task offered', UI_TIMEOUT_MS);
      expect(await toggle.isChecked()).toBe(true);
      await label.click();
      await waitFor(async () => !(await offered()), 'run_just_task taken back', UI_TIMEOUT_MS);
      expect(await toggle.isChecked()).toBe(false);
    } finally {
      await client.close();
    }
  });

  test('rotating the token refuses the old one', async () => {
    const region = await showWorktree('feature-x');
    await openTab(region, 'Server');
    const status = await region.getByText(/^Running on port \d+$/).textContent();
    const port = portOf(status ?? '');
    const oldToken = await tokenOf(region);
    const ping = (token: string) =>
      rawRequest({
        port,
        method: 'POST',
        path: '/mcp',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
    expect((await ping(oldToken)).status).not.toBe(403);

    const server = await openTab(region, 'Server');
    await server.getByRole('button', { name: 'Rotate token' }).click();
    await server.getByRole('button', { name: 'Rotate now' }).click();
    await server.getByText(/old one is refused/).waitFor({ timeout: UI_TIMEOUT_MS });
    await screenshot('06-rotated');
    const newToken = await tokenOf(region);
    expect(newToken).not.toBe(oldToken);
    expect(newToken.length).toBeGreaterThan(20);

    expect((await ping(oldToken)).status).toBe(403);
    const { client } = await connectClient(port, 'legacy-http', newToken);
    await client.close();
    // The browser logs the refused addRepo (HTTP 400) of the first test; nothing else may fail.
    expect(pageErrors.filter((error) => !error.includes('status of 400 (Bad Request)'))).toEqual(
      [],
    );
  });
});
