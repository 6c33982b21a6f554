// The chat panel end to end: a scripted fake Anthropic provider on 127.0.0.1 (real SSE wire
// format, main/testing/fake-llm-provider.ts) and `grove serve` pointed at it through GROVE_LLM_*, driven
// in real Chromium. The model asks for read_file on a real file of the repo: the call shows inline
// with its arguments and result, the worktree's server really serves it (Activity tab, client
// "Grove chat"), the file's content reaches the provider in its next request, and the final answer
// renders as markdown. A 401 from the provider shows a clear message; Stop during a slow stream
// ends it and the partial text stays, marked as stopped.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import {
  startFakeProvider,
  type FakeProvider,
  type RecordedRequest,
} from '../main/testing/fake-llm-provider.ts';
import { randomFirstPort } from '../main/testing/net.ts';
import { makeTempRepo, type TempRepo } from '../main/testing/temp-repo.ts';
import { collectPageErrors, launchChromium, type LaunchedChromium } from './support/chromium.ts';
import { startGroveServe, type GroveServe } from './support/grove-serve.ts';

const UI_TIMEOUT_MS = 10_000;
const SECRET = 'the secret word is grove-42';
const API_KEY = 'sk-e2e-test-key';
/** With GROVE_SCREENSHOTS_DIR set, screenshots of the panel are saved there (docs/screenshots). */
const SCREENSHOTS = process.env['GROVE_SCREENSHOTS_DIR'];

describe('chat panel in Chromium against a fake Anthropic provider', () => {
  let repo: TempRepo | undefined;
  let fake: FakeProvider | undefined;
  let serve: GroveServe | undefined;
  let chromium: LaunchedChromium | undefined;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    repo = await makeTempRepo({ 'notes/hello.txt': `${SECRET}\n` });
    fake = await startFakeProvider('anthropic', []);
    serve = await startGroveServe({
      repos: [repo.root],
      env: {
        GROVE_FIRST_PORT: String(randomFirstPort()),
        GROVE_LLM_PROVIDER: 'anthropic',
        GROVE_LLM_BASE_URL: fake.baseUrl,
        GROVE_LLM_MODEL: 'fake-model',
        GROVE_LLM_API_KEY: API_KEY,
      },
    });
    chromium = await launchChromium({
      colorScheme: process.env['GROVE_E2E_DARK'] ? 'dark' : 'light',
    });
  });

  afterAll(async () => {
    await chromium?.close();
    await serve?.stop();
    await fake?.close();
    await repo?.cleanup();
  });

  async function openChat(): Promise<{ page: Page; region: Locator; chat: Locator }> {
    const page = await chromium!.context.newPage();
    collectPageErrors(page, pageErrors);
    await page.goto(serve!.ui);
    await page
      .getByRole('navigation', { name: 'Repositories and worktrees' })
      .getByRole('button', { name: 'main', exact: true })
      .click();
    const region = page.getByRole('main').getByRole('region', { name: 'main', exact: true });
    await region
      .getByText(`Running on port ${serve!.port('main')}`, { exact: true })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await region.getByRole('tab', { name: 'Chat', exact: true }).click();
    const chat = region.getByRole('tabpanel');
    await chat.getByRole('textbox', { name: 'Message', exact: true }).waitFor();
    return { page, region, chat };
  }

  async function newConversation(chat: Locator): Promise<void> {
    await chat.getByRole('button', { name: 'New conversation' }).click();
    await chat.getByText('Ask about this worktree').waitFor({ timeout: UI_TIMEOUT_MS });
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/${name}.png` });
  }

  test('runs read_file through the server, shows the call inline and renders the answer', async () => {
    fake!.script.push(
      {
        kind: 'tool-calls',
        text: 'Let me read that file.',
        calls: [{ id: 'toolu_1', name: 'read_file', arguments: { path: 'notes/hello.txt' } }],
      },
      { kind: 'text', chunks: ['The file says the secret word is ', '**grove-42**', '.'] },
    );
    const requestsBefore = fake!.requests.length;
    const { page, region, chat } = await openChat();
    await expect
      .poll(() => chat.getByRole('button', { name: 'Stop', exact: true }).isEnabled())
      .toBe(false);

    await chat.getByRole('textbox', { name: 'Message' }).fill('What is in notes/hello.txt?');
    await chat.getByRole('button', { name: 'Send', exact: true }).click();

    const log = chat.getByRole('log', { name: 'Messages' });
    await log.getByText('What is in notes/hello.txt?').waitFor({ timeout: UI_TIMEOUT_MS });
    // The final answer, rendered as markdown (the bold word is a <strong>).
    const answer = log.locator('strong', { hasText: 'grove-42' });
    await answer.waitFor({ timeout: UI_TIMEOUT_MS });
    await log.getByText('Let me read that file.').waitFor();
    await expect.poll(() => chat.getByRole('textbox', { name: 'Message' }).inputValue()).toBe('');

    await screenshot(page, 'chat-answer');

    // The tool call is inline: name, arguments and the file's content as its result.
    const call = log.locator('details.chat-tool', { hasText: 'read_file' });
    await expect.poll(() => call.count()).toBe(1);
    await expect.poll(() => call.getAttribute('class')).toContain('chat-tool--done');
    await call.locator('summary').click();
    const args = call.getByLabel('Arguments of read_file');
    await args.waitFor();
    expect(JSON.parse(await args.innerText())).toEqual({ path: 'notes/hello.txt' });
    expect(await call.getByLabel('Result of read_file').innerText()).toContain(SECRET);
    expect(await call.locator('summary').innerText()).toMatch(/done · \d+(\.\d+)? m?s/);
    await screenshot(page, 'chat-tool-call');

    // The provider: authenticated with the key, offered the tools, then sent the file's content.
    const requests = fake!.requests.slice(requestsBefore);
    expect(requests).toHaveLength(2);
    const headers = requests[0]!.headers;
    expect(headers['x-api-key'] ?? headers.authorization).toMatch(
      new RegExp(`(Bearer )?${API_KEY}`),
    );
    expect(toolNames(requests[0]!)).toContain('read_file');
    const [result] = toolResults(requests[1]!);
    expect(result).toMatchObject({ id: 'toolu_1', isError: false });
    expect(result!.text).toContain(SECRET);

    // Stop is off again once the run is over.
    await expect
      .poll(() => chat.getByRole('button', { name: 'Stop', exact: true }).isEnabled())
      .toBe(false);

    // The worktree's server really served it: the Activity tab lists the call by "Grove chat".
    await region.getByRole('tab', { name: /^Activity/ }).click();
    const calls = region.getByRole('list', { name: 'Tool calls' });
    await calls
      .getByRole('button')
      .filter({ hasText: 'read_file' })
      .filter({ hasText: 'Grove chat' })
      .first()
      .waitFor({ timeout: UI_TIMEOUT_MS });

    // Back on the Chat tab, the conversation is still there (listed with its title).
    await region.getByRole('tab', { name: 'Chat', exact: true }).click();
    await chat
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('button', { name: /^What is in notes\/hello\.txt\?/ })
      .waitFor({ timeout: UI_TIMEOUT_MS });
    await log.locator('strong', { hasText: 'grove-42' }).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  test('shows a clear message when the provider refuses the key (401)', async () => {
    fake!.script.push({ kind: 'status', status: 401, message: 'invalid x-api-key' });
    const { page, chat } = await openChat();
    await newConversation(chat);
    const input = chat.getByRole('textbox', { name: 'Message' });
    await input.fill('Hello?');
    await input.press('Enter'); // Enter sends

    const alert = chat.getByRole('log', { name: 'Messages' }).getByRole('alert');
    await alert.waitFor({ timeout: UI_TIMEOUT_MS });
    const text = await alert.innerText();
    expect(text).toContain('The model could not answer');
    expect(text).toMatch(/refused the API key \(401: invalid x-api-key\)/);
    expect(text).toContain('Check the API key in the chat settings');
    await expect
      .poll(() => chat.getByRole('button', { name: 'Stop', exact: true }).isEnabled())
      .toBe(false);
    await screenshot(page, 'chat-401');

    // The settings form says a key is set (from GROVE_LLM_API_KEY) and never shows it.
    await chat.getByRole('button', { name: 'Chat settings' }).click();
    const form = chat.getByRole('region', { name: 'Model provider' });
    await form.waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await form.getByLabel(/^API key/).inputValue()).toBe('');
    expect(await form.getByLabel(/^API key/).isDisabled()).toBe(true);
    expect(await form.getByLabel(/^Model/).inputValue()).toBe('fake-model');
    const formText = await form.innerText();
    expect(formText).toContain('An API key is set.');
    expect(formText).toContain('GROVE_LLM_API_KEY');
    expect(await page.content()).not.toContain(API_KEY);
    await screenshot(page, 'chat-settings');
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  test('Stop during a slow stream ends it and keeps the partial text, marked stopped', async () => {
    fake!.script.push({ kind: 'hang', chunks: ['Partial answer ', 'that never ends'] });
    const disconnectsBefore = fake!.disconnects;
    const { page, chat } = await openChat();
    await newConversation(chat);
    const input = chat.getByRole('textbox', { name: 'Message' });
    await input.fill('Tell me a long story');
    // Shift+Enter is a new line, not a send.
    await input.press('Shift+Enter');
    await input.pressSequentially('please');
    expect(await input.inputValue()).toBe('Tell me a long story\nplease');
    await chat.getByRole('button', { name: 'Send', exact: true }).click();

    const log = chat.getByRole('log', { name: 'Messages' });
    await log.getByText('Partial answer that never ends').waitFor({ timeout: UI_TIMEOUT_MS });
    const stop = chat.getByRole('button', { name: 'Stop', exact: true });
    await expect.poll(() => stop.isEnabled(), { timeout: UI_TIMEOUT_MS }).toBe(true);
    await screenshot(page, 'chat-streaming');
    await stop.click();

    const stopped = log.getByRole('article', { name: /^Assistant/ }).last();
    await stopped.getByText('Stopped', { exact: true }).waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await stopped.innerText()).toContain('Partial answer that never ends');
    await expect.poll(() => stop.isEnabled()).toBe(false);
    await expect.poll(() => fake!.disconnects).toBeGreaterThan(disconnectsBefore);
    // The conversation accepts a new message.
    await input.fill('Thanks');
    await expect
      .poll(() => chat.getByRole('button', { name: 'Send', exact: true }).isEnabled())
      .toBe(true);
    await screenshot(page, 'chat-stopped');
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});

/** The tool names offered in an Anthropic Messages request. */
function toolNames(request: RecordedRequest): string[] {
  return ((request.body.tools ?? []) as { name: string }[]).map((tool) => tool.name);
}

/** The tool results sent back in an Anthropic Messages request. */
function toolResults(request: RecordedRequest) {
  const messages = request.body.messages as { role: string; content: unknown }[];
  return messages
    .filter((message) => message.role === 'user' && Array.isArray(message.content))
    .flatMap((message) => message.content as Record<string, unknown>[])
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({
      id: block.tool_use_id as string,
      text: typeof block.content === 'string' ? block.content : JSON.stringify(block.content),
      isError: block.is_error === true,
    }));
}
