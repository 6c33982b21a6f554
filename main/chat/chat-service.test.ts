// The chat against a real Host (real repo, real worktree MCP server) and scripted fake providers
// speaking each real wire format: a read_file round trip served by the server (Activity log,
// "Grove chat" in Clients) whose result reaches the provider; tool errors as error results; a 401,
// a rate limit with backoff, an unreachable endpoint; Stop mid-stream; a host restart; the
// reconcile quick action; settings that never reveal the key. Every chat event is checked against
// the HostEvent schema.
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatEvent, ChatProviderKind } from '../../shared/chat.ts';
import { HostEventSchema } from '../../shared/host-api.ts';
import { runHostCommand } from '../host/host-commands.ts';
import { Host } from '../host/host.ts';
import { randomFirstPort, waitFor } from '../testing/net.ts';
import { makeTempDir, makeTempRepo } from '../testing/temp-repo.ts';
import { CHAT_CLIENT_NAME } from './chat-mcp-client.ts';
import {
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
} from '../testing/fake-llm-provider.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SECRET = 'the secret word is grove-42';
const API_KEY = 'sk-test-key';

interface Setup {
  host: Host;
  worktreeId: string;
  fake: FakeProvider;
  dataDir: string;
  repoRoot: string;
  events: ChatEvent[];
}

async function openHost(dataDir: string, events: ChatEvent[]): Promise<Host> {
  const host = await Host.open({
    dataDir,
    firstPort: randomFirstPort(),
    worktreePollMs: 0,
    chat: { env: {}, retry: { baseMs: 20, maxMs: 200 } },
  });
  host.onEvent((event) => {
    HostEventSchema.parse(event); // every event the host pushes fits the contract
    if (event.type === 'chat') events.push(event.event);
  });
  return host;
}

async function setup(provider: ChatProviderKind, script: FakeReply[]): Promise<Setup> {
  const repo = await makeTempRepo({ 'notes/hello.txt': `${SECRET}\n` });
  cleanups.push(repo.cleanup);
  const fake = await startFakeProvider(provider, script);
  cleanups.push(() => fake.close());
  const dataDir = await makeTempDir();
  const events: ChatEvent[] = [];
  const host = await openHost(dataDir, events);
  cleanups.push(() => host.close());
  const repoState = await host.addRepo(repo.root);
  await host.startAll();
  await runHostCommand(host, 'setChatSettings', {
    provider,
    baseUrl: fake.baseUrl,
    model: 'fake-model',
    apiKey: API_KEY,
  });
  return {
    host,
    worktreeId: repoState.worktrees[0]!.id,
    fake,
    dataDir,
    repoRoot: repo.root,
    events,
  };
}

async function newConversation(host: Host, worktreeId: string): Promise<string> {
  const summary = (await runHostCommand(host, 'newConversation', { worktreeId })) as { id: string };
  return summary.id;
}

/** Sends through the HostApi command, then waits for the run to finish. */
async function send(host: Host, worktreeId: string, conversationId: string, text: string) {
  await runHostCommand(host, 'sendChatMessage', { worktreeId, conversationId, text });
  await host.chat.whenIdle(conversationId);
  return host.chat.getConversation(worktreeId, conversationId);
}

function runFinished(events: ChatEvent[]) {
  return events.filter((event) => event.kind === 'run-finished');
}

/** The text the provider received as the result of a tool call, in either wire format. */
function toolResultsSent(provider: ChatProviderKind, body: Record<string, unknown>) {
  const messages = body.messages as Record<string, unknown>[];
  if (provider === 'openai') {
    return messages
      .filter((message) => message.role === 'tool')
      .map((message) => ({
        id: message.tool_call_id as string,
        text: message.content as string,
        isError: (message.content as string).startsWith('Error:'),
      }));
  }
  return messages
    .filter((message) => message.role === 'user' && Array.isArray(message.content))
    .flatMap((message) => message.content as Record<string, unknown>[])
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({
      id: block.tool_use_id as string,
      text: block.content as string,
      isError: block.is_error === true,
    }));
}

function offeredTools(provider: ChatProviderKind, body: Record<string, unknown>): string[] {
  const tools = (body.tools ?? []) as Record<string, unknown>[];
  return tools.map((tool) =>
    provider === 'openai'
      ? ((tool.function as Record<string, unknown>).name as string)
      : (tool.name as string),
  );
}

describe.each(['anthropic', 'openai'] as const)('chat with the %s wire format', (provider) => {
  it('runs read_file through the worktree server and feeds the file to the model', async () => {
    const { host, worktreeId, fake, events } = await setup(provider, [
      {
        kind: 'tool-calls',
        text: 'Let me read it.',
        calls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'notes/hello.txt' } }],
      },
      { kind: 'text', chunks: ['The file says ', 'grove-42.'] },
    ]);
    const conversationId = await newConversation(host, worktreeId);
    const conversation = await send(
      host,
      worktreeId,
      conversationId,
      'What is in notes/hello.txt?',
    );

    // The model was offered the server's tools and authenticated with the key.
    expect(fake.requests).toHaveLength(2);
    expect(offeredTools(provider, fake.requests[0]!.body)).toContain('read_file');
    const { headers } = fake.requests[0]!;
    // (Anthropic's SDK 1.x sends the key as a Bearer token too; older ones used x-api-key.)
    expect(headers['x-api-key'] ?? headers.authorization).toMatch(
      new RegExp(`(Bearer )?${API_KEY}`),
    );
    expect(fake.requests[0]!.body.stream).toBe(true);

    // The server really served it: Activity log and Clients list.
    const served = () => host.snapshot().activity[worktreeId]!.find((a) => a.tool === 'read_file');
    await waitFor(() => served() !== undefined, 'the tool call in the Activity log');
    const entry = served();
    expect(entry).toMatchObject({ clientName: CHAT_CLIENT_NAME, ok: true });
    await waitFor(
      () =>
        host
          .snapshot()
          .repos[0]!.worktrees[0]!.clients.some((client) => client.name === CHAT_CLIENT_NAME),
      'Grove chat in the Clients list',
    );

    // The file's content reached the provider in the next request.
    const [result] = toolResultsSent(provider, fake.requests[1]!.body);
    expect(result).toMatchObject({ id: 'call_1', isError: false });
    expect(result!.text).toContain(SECRET);

    // The final answer is stored; the tool call is shown with its result and duration.
    expect(conversation.title).toBe('What is in notes/hello.txt?');
    expect(conversation.messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'complete'],
      ['assistant', 'complete'],
    ]);
    const [toolStep, answer] = conversation.messages.slice(1);
    expect(toolStep!.parts[0]).toEqual({ type: 'text', text: 'Let me read it.' });
    expect(toolStep!.parts[1]).toMatchObject({
      type: 'tool-call',
      callId: 'call_1',
      name: 'read_file',
      arguments: { path: 'notes/hello.txt' },
      status: 'done',
      result: { isError: false },
    });
    expect(answer!.parts).toEqual([{ type: 'text', text: 'The file says grove-42.' }]);

    // The UI's events: deltas, the tool call with its arguments and result, the end.
    expect(
      events
        .filter((e) => e.kind === 'text-delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('Let me read it.The file says grove-42.');
    expect(events.find((e) => e.kind === 'tool-call-started')).toMatchObject({
      name: 'read_file',
      arguments: { path: 'notes/hello.txt' },
    });
    const finished = events.find((e) => e.kind === 'tool-call-finished');
    expect(finished).toMatchObject({ status: 'done', result: { isError: false } });
    expect(runFinished(events)).toEqual([
      { kind: 'run-finished', outcome: 'complete', error: null },
    ]);
  });

  it('sends a tool error back to the model as an error result', async () => {
    const { host, worktreeId, fake } = await setup(provider, [
      {
        kind: 'tool-calls',
        calls: [{ id: 'call_bad', name: 'read_file', arguments: { path: '../../etc/passwd' } }],
      },
      { kind: 'text', chunks: ['That path is outside the worktree.'] },
    ]);
    const conversationId = await newConversation(host, worktreeId);
    const conversation = await send(host, worktreeId, conversationId, 'Read /etc/passwd');

    const [result] = toolResultsSent(provider, fake.requests[1]!.body);
    expect(result).toMatchObject({ id: 'call_bad', isError: true });
    expect(result!.text.length).toBeGreaterThan(0);
    expect(conversation.messages[1]!.parts[0]).toMatchObject({
      type: 'tool-call',
      status: 'error',
      result: { isError: true },
    });
    expect(conversation.messages.at(-1)).toMatchObject({ status: 'complete', role: 'assistant' });
  });

  it('reports a 401 from the provider as a bad API key', async () => {
    const { host, worktreeId, events } = await setup(provider, [
      { kind: 'status', status: 401, message: 'invalid x-api-key' },
    ]);
    const conversationId = await newConversation(host, worktreeId);
    const conversation = await send(host, worktreeId, conversationId, 'Hello');

    const [finished] = runFinished(events);
    expect(finished).toMatchObject({ outcome: 'error' });
    expect(finished!.error).toMatch(/refused the API key \(401: invalid x-api-key\)/);
    expect(finished!.error).toMatch(/Check the API key in the chat settings/);
    expect(conversation.messages.at(-1)).toMatchObject({
      role: 'assistant',
      status: 'error',
      error: finished!.error,
    });
  });

  it('retries a rate limit with backoff, then answers', async () => {
    const { host, worktreeId, fake, events } = await setup(provider, [
      { kind: 'status', status: 429, message: 'slow down', headers: { 'retry-after': '0' } },
      { kind: 'status', status: 429, message: 'slow down' },
      { kind: 'text', chunks: ['Finally.'] },
    ]);
    const conversationId = await newConversation(host, worktreeId);
    const conversation = await send(host, worktreeId, conversationId, 'Hello');

    expect(fake.requests).toHaveLength(3);
    const retries = events.filter((e) => e.kind === 'retrying');
    expect(retries.map((e) => [e.attempt, e.delayMs])).toEqual([
      [1, 0],
      [2, 40],
    ]);
    expect(conversation.messages.at(-1)!.parts).toEqual([{ type: 'text', text: 'Finally.' }]);
  });

  it('gives up on a rate limit after bounded retries with a clear message', async () => {
    const limited: FakeReply = { kind: 'status', status: 429, message: 'slow down' };
    const { host, worktreeId, fake, events } = await setup(provider, [
      limited,
      limited,
      limited,
      limited,
      limited,
    ]);
    const conversationId = await newConversation(host, worktreeId);
    await send(host, worktreeId, conversationId, 'Hello');
    expect(fake.requests).toHaveLength(4);
    expect(runFinished(events)[0]!.error).toMatch(/rate-limiting.*gave up after 4 attempts/);
  });

  it('Stop during a stream keeps the partial answer and leaves the conversation consistent', async () => {
    const { host, worktreeId, fake, events } = await setup(provider, [
      { kind: 'hang', chunks: ['Partial ', 'answer'] },
      { kind: 'text', chunks: ['Second answer.'] },
    ]);
    const conversationId = await newConversation(host, worktreeId);
    await runHostCommand(host, 'sendChatMessage', { worktreeId, conversationId, text: 'Go' });
    await waitFor(
      () => events.filter((e) => e.kind === 'text-delta').length === 2,
      'the partial answer to stream',
    );
    expect(host.chat.listConversations(worktreeId)[0]!.running).toBe(true);
    await expect(
      runHostCommand(host, 'sendChatMessage', { worktreeId, conversationId, text: 'again' }),
    ).rejects.toThrow(/still answering/);

    expect(await runHostCommand(host, 'stopChat', { worktreeId, conversationId })).toEqual({
      stopped: true,
    });
    await waitFor(() => fake.disconnects === 1, 'the model stream to be cancelled');
    expect(runFinished(events)).toEqual([
      { kind: 'run-finished', outcome: 'stopped', error: null },
    ]);
    let conversation = host.chat.getConversation(worktreeId, conversationId);
    expect(conversation.running).toBe(false);
    expect(conversation.messages.at(-1)).toMatchObject({
      role: 'assistant',
      status: 'stopped',
      parts: [{ type: 'text', text: 'Partial answer' }],
    });

    // The conversation goes on: the partial answer is part of the history the model sees.
    conversation = await send(host, worktreeId, conversationId, 'Continue');
    const history = fake.requests[1]!.body.messages as { role: string; content: unknown }[];
    const roles = history.filter((m) => m.role !== 'system').map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(history)).toContain('Partial answer');
    expect(conversation.messages.at(-1)).toMatchObject({ status: 'complete' });
    expect(await runHostCommand(host, 'stopChat', { worktreeId, conversationId })).toEqual({
      stopped: false,
    });
  });

  it('keeps a conversation across a host restart and goes on with it', async () => {
    const { host, worktreeId, fake, dataDir } = await setup(provider, [
      {
        kind: 'tool-calls',
        calls: [{ id: 'call_1', name: 'read_file', arguments: { path: 'notes/hello.txt' } }],
      },
      { kind: 'text', chunks: ['It says grove-42.'] },
      { kind: 'text', chunks: ['Still grove-42.'] },
    ]);
    const conversationId = await newConversation(host, worktreeId);
    const before = await send(host, worktreeId, conversationId, 'Read the notes');
    await host.close();

    const events: ChatEvent[] = [];
    const reopened = await openHost(dataDir, events);
    cleanups.push(() => reopened.close());
    await reopened.restoreRepos();
    await reopened.startAll();
    const listed = (await runHostCommand(reopened, 'listConversations', { worktreeId })) as {
      conversations: { id: string }[];
    };
    expect(listed.conversations.map((c) => c.id)).toEqual([conversationId]);
    const after = await runHostCommand(reopened, 'getConversation', { worktreeId, conversationId });
    expect(after).toEqual(before);

    // Settings (and, in memory, no key: the test's key lived in the first host only).
    const settings = (await runHostCommand(reopened, 'getChatSettings', {})) as Record<
      string,
      unknown
    >;
    expect(settings).toMatchObject({ provider, baseUrl: fake.baseUrl, model: 'fake-model' });
    await runHostCommand(reopened, 'setChatSettings', { apiKey: API_KEY });
    const next = await send(reopened, worktreeId, conversationId, 'And now?');
    expect(next.messages.at(-1)!.parts).toEqual([{ type: 'text', text: 'Still grove-42.' }]);
    const [result] = toolResultsSent(provider, fake.requests[2]!.body);
    expect(result!.text).toContain(SECRET); // the old tool result is still in the history
  });
});

describe('chat errors and settings', () => {
  it('reports an unreachable provider clearly', async () => {
    const { host, worktreeId, fake, events } = await setup('openai', []);
    await fake.close();
    const conversationId = await newConversation(host, worktreeId);
    await send(host, worktreeId, conversationId, 'Hello');
    expect(runFinished(events)[0]!.error).toMatch(
      new RegExp(
        `^Cannot reach the OpenAI-compatible endpoint at ${fake.baseUrl}: .+Check the network`,
      ),
    );
  });

  it('refuses to send without a model, and while the server is stopped', async () => {
    const { host, worktreeId } = await setup('anthropic', []);
    const conversationId = await newConversation(host, worktreeId);
    await runHostCommand(host, 'setChatSettings', { model: null });
    await expect(
      runHostCommand(host, 'sendChatMessage', { worktreeId, conversationId, text: 'Hi' }),
    ).rejects.toThrow('Choose a model in the chat settings first.');
    await runHostCommand(host, 'setChatSettings', { model: 'fake-model' });
    await host.stopServer(worktreeId);
    await expect(
      runHostCommand(host, 'sendChatMessage', { worktreeId, conversationId, text: 'Hi' }),
    ).rejects.toThrow(/is not running: start it/);
    expect(host.chat.getConversation(worktreeId, conversationId).messages).toEqual([]);
  });

  it('answers again after the worktree server restarts (re-initializes the MCP session)', async () => {
    const { host, worktreeId, fake } = await setup('anthropic', [
      {
        kind: 'tool-calls',
        calls: [{ id: 'a', name: 'read_file', arguments: { path: 'notes/hello.txt' } }],
      },
      { kind: 'text', chunks: ['one'] },
      {
        kind: 'tool-calls',
        calls: [{ id: 'b', name: 'read_file', arguments: { path: 'notes/hello.txt' } }],
      },
      { kind: 'text', chunks: ['two'] },
    ]);
    const conversationId = await newConversation(host, worktreeId);
    await send(host, worktreeId, conversationId, 'first');
    await host.restartServer(worktreeId);
    const conversation = await send(host, worktreeId, conversationId, 'second');
    expect(toolResultsSent('anthropic', fake.requests[3]!.body).at(-1)).toMatchObject({
      id: 'b',
      isError: false,
    });
    expect(conversation.messages.at(-1)!.parts).toEqual([{ type: 'text', text: 'two' }]);
  });

  it('never returns the API key; environment variables override the stored settings', async () => {
    const dataDir = await makeTempDir();
    const host = await Host.open({
      dataDir,
      firstPort: randomFirstPort(),
      worktreePollMs: 0,
      chat: {
        env: {
          GROVE_LLM_PROVIDER: 'openai',
          GROVE_LLM_BASE_URL: 'http://127.0.0.1:11434/v1',
          GROVE_LLM_MODEL: 'llama3',
          GROVE_LLM_API_KEY: 'sk-env-secret',
        },
      },
    });
    cleanups.push(() => host.close());
    const view = await runHostCommand(host, 'getChatSettings', {});
    expect(view).toEqual({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      baseUrlIsDefault: false,
      model: 'llama3',
      apiKeySet: true,
      fromEnvironment: ['apiKey', 'baseUrl', 'model', 'provider'],
      apiKeyPersisted: false,
    });
    expect(JSON.stringify(view)).not.toContain('sk-env-secret');

    const plain = await Host.open({
      dataDir: await makeTempDir(),
      worktreePollMs: 0,
      chat: { env: {} },
    });
    cleanups.push(() => plain.close());
    expect(await runHostCommand(plain, 'getChatSettings', {})).toMatchObject({
      provider: 'anthropic',
      baseUrl: 'https://api.anthropic.com',
      baseUrlIsDefault: true,
      model: '',
      apiKeySet: false,
      fromEnvironment: [],
    });
    const changed = await runHostCommand(plain, 'setChatSettings', {
      provider: 'openai',
      apiKey: 'sk-ui-secret',
    });
    expect(changed).toMatchObject({ baseUrl: 'https://api.openai.com/v1', apiKeySet: true });
    expect(JSON.stringify(changed)).not.toContain('sk-ui-secret');
    expect(await runHostCommand(plain, 'setChatSettings', { apiKey: null })).toMatchObject({
      apiKeySet: false,
    });
  });

  it('starts a Reconcile chat from the server prompt, or says clearly that there is none', async () => {
    const { host, worktreeId, fake } = await setup('anthropic', [
      { kind: 'text', chunks: ['Reconciled.'] },
    ]);
    let started: { conversation: { id: string }; message: { parts: unknown[] } } | undefined;
    try {
      started = (await runHostCommand(host, 'startReconcileChat', {
        worktreeId,
      })) as typeof started;
    } catch (error) {
      // Prompts are not served yet by this Grove version: the message says so.
      expect((error as Error).message).toMatch(/offers no "reconcile" prompt/);
      expect(fake.requests).toHaveLength(0);
      expect(host.chat.listConversations(worktreeId)).toEqual([]);
      return;
    }
    await host.chat.whenIdle(started!.conversation.id);
    expect(started!.message.parts[0]).toMatchObject({ type: 'text' });
    expect(fake.requests).toHaveLength(1);
    const conversation = host.chat.getConversation(worktreeId, started!.conversation.id);
    expect(conversation.messages.at(-1)!.parts).toEqual([{ type: 'text', text: 'Reconciled.' }]);
  });
});
