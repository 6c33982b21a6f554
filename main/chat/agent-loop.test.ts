// The agent loop's consistency rules with stub provider and MCP client (the real ones are covered
// against a real Host in chat-service.test.ts): Stop during a running tool call cancels it and
// gives every tool call a result; the step limit ends a run; a message left `streaming` by a dead
// host is repaired on open; stored messages map to a well-formed provider history.
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../shared/chat.ts';
import { AppDatabase } from '../host/app-database.ts';
import { makeTempDir } from '../testing/temp-repo.ts';
import { runAgent, toModelMessages, type AgentRun } from './agent-loop.ts';
import type { ChatMcpClient } from './chat-mcp-client.ts';
import { ConversationStore, STOPPED_RESULT_TEXT } from './conversation-store.ts';
import type { ChatProvider, ModelRequest } from './provider.ts';

const databases: AppDatabase[] = [];
afterEach(() => {
  for (const db of databases.splice(0)) db.close();
});

async function storeWithConversation() {
  const db = await AppDatabase.open(await makeTempDir());
  databases.push(db);
  const repo = db.upsertRepo('/tmp/grove-agent-loop');
  const worktree = db.ensureWorktree(repo.id, '/tmp/grove-agent-loop', 40_000);
  const store = new ConversationStore(db.connection);
  const conversation = store.createConversation(String(worktree.id), 'test');
  store.addMessage(conversation.id, {
    role: 'user',
    status: 'complete',
    parts: [{ type: 'text', text: 'Look at two files' }],
    error: null,
  });
  return { db, store, conversationId: conversation.id, worktreeId: String(worktree.id) };
}

/** A provider that always asks for the same two tool calls; records the requests. */
function toolCallingProvider(requests: ModelRequest[]): ChatProvider {
  return {
    kind: 'anthropic',
    stream: async (request, _signal, onEvent) => {
      requests.push(structuredClone(request));
      onEvent({ type: 'text', text: 'Reading.' });
      const toolCalls = [
        { id: `a${requests.length}`, name: 'read_file', arguments: { path: 'a.txt' } },
        { id: `b${requests.length}`, name: 'read_file', arguments: { path: 'b.txt' } },
      ];
      return { text: 'Reading.', toolCalls, stopReason: 'tool-use' };
    },
  };
}

function baseRun(
  overrides: Partial<AgentRun> &
    Pick<AgentRun, 'store' | 'conversationId' | 'mcp' | 'provider' | 'signal'>,
): AgentRun {
  return {
    worktreeId: '1',
    model: 'm',
    system: 's',
    maxTokens: 100,
    maxSteps: 5,
    retry: { maxRetries: 0, baseMs: 1, maxMs: 1 },
    emit: () => {},
    ...overrides,
  };
}

describe('agent loop', () => {
  it('Stop during a tool call cancels it and gives every tool call a result', async () => {
    const { store, conversationId } = await storeWithConversation();
    const controller = new AbortController();
    const events: ChatEvent[] = [];
    let toolSignal: AbortSignal | undefined;
    const mcp = {
      listTools: async () => [{ name: 'read_file', description: 'reads', inputSchema: {} }],
      callTool: (_w: string, _n: string, _a: unknown, signal: AbortSignal) => {
        toolSignal = signal;
        return new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new Error('AbortError')), { once: true });
          setTimeout(() => controller.abort(), 10); // the user presses Stop while the tool runs
        });
      },
    } as unknown as ChatMcpClient;
    const result = await runAgent(
      baseRun({
        store,
        conversationId,
        mcp,
        provider: toolCallingProvider([]),
        signal: controller.signal,
        emit: (event) => events.push(event),
      }),
    );
    expect(result).toEqual({ outcome: 'stopped', error: null });
    expect(toolSignal?.aborted).toBe(true);
    const [, assistant] = store.listMessages(conversationId);
    expect(assistant).toMatchObject({ status: 'stopped' });
    expect(assistant!.parts).toEqual([
      { type: 'text', text: 'Reading.' },
      expect.objectContaining({
        callId: 'a1',
        status: 'stopped',
        result: expect.objectContaining({ isError: true, text: STOPPED_RESULT_TEXT }),
      }),
      expect.objectContaining({
        callId: 'b1',
        status: 'stopped',
        result: expect.objectContaining({ isError: true }),
      }),
    ]);
    // The history the next request would carry: each tool call has its result.
    expect(toModelMessages(store.listMessages(conversationId))).toEqual([
      { role: 'user', text: 'Look at two files' },
      {
        role: 'assistant',
        text: 'Reading.',
        toolCalls: [
          { id: 'a1', name: 'read_file', arguments: { path: 'a.txt' } },
          { id: 'b1', name: 'read_file', arguments: { path: 'b.txt' } },
        ],
      },
      {
        role: 'tool-results',
        results: [
          { callId: 'a1', name: 'read_file', text: STOPPED_RESULT_TEXT, isError: true },
          { callId: 'b1', name: 'read_file', text: STOPPED_RESULT_TEXT, isError: true },
        ],
      },
    ]);
    expect(events.at(-1)).toMatchObject({ kind: 'message-finished' });
  });

  it('ends a run that keeps calling tools at the step limit', async () => {
    const { store, conversationId } = await storeWithConversation();
    const requests: ModelRequest[] = [];
    const mcp = {
      listTools: async () => [],
      callTool: async () => ({ isError: false, text: 'content', durationMs: 1 }),
    } as unknown as ChatMcpClient;
    const result = await runAgent(
      baseRun({
        store,
        conversationId,
        mcp,
        provider: toolCallingProvider(requests),
        signal: new AbortController().signal,
        maxSteps: 3,
      }),
    );
    expect(result.outcome).toBe('step-limit');
    expect(result.error).toMatch(/after 3 steps/);
    expect(requests).toHaveLength(3);
    // The third request carried both earlier steps with their results.
    expect(requests[2]!.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool-results',
      'assistant',
      'tool-results',
    ]);
  });

  it('repairs a message a dead host left streaming', async () => {
    const { db, store, conversationId } = await storeWithConversation();
    store.addMessage(conversationId, {
      role: 'assistant',
      status: 'streaming',
      parts: [
        { type: 'text', text: 'Half' },
        {
          type: 'tool-call',
          callId: 'x',
          name: 'read_file',
          arguments: {},
          status: 'running',
          result: null,
        },
      ],
      error: null,
    });
    const reopened = new ConversationStore(db.connection);
    const last = reopened.listMessages(conversationId).at(-1)!;
    expect(last.status).toBe('stopped');
    expect(last.parts[1]).toMatchObject({
      status: 'stopped',
      result: { text: STOPPED_RESULT_TEXT },
    });
  });
});
