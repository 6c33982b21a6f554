// The chat panel's conversation state: events applied in order, events buffered while the
// conversation loads and replayed onto it without doubling text, run errors shown once.
import { describe, expect, test } from 'vitest';
import type { ChatConversation, ChatEvent, ChatMessage } from '../../../shared/chat.ts';
import {
  applyChatEvent,
  loadingConversation,
  mergeLoaded,
  unshownRunError,
  type ConversationView,
} from './chat-state.ts';

function message(id: string, overrides: Partial<ChatMessage> = {}): ChatMessage {
  return {
    id,
    conversationId: 'c1',
    role: 'assistant',
    status: 'streaming',
    parts: [],
    error: null,
    createdAt: 1,
    ...overrides,
  };
}

const user = message('u1', {
  role: 'user',
  status: 'complete',
  parts: [{ type: 'text', text: 'hi' }],
});

function ready(messages: ChatMessage[] = []): ConversationView {
  return { ...loadingConversation('c1'), load: 'ready', messages };
}

function apply(view: ConversationView, events: ChatEvent[]): ConversationView {
  return events.reduce((acc, event) => applyChatEvent(acc, event, 0), view);
}

function conversation(messages: ChatMessage[], running: boolean): ChatConversation {
  return { id: 'c1', worktreeId: 'w1', title: 't', createdAt: 1, updatedAt: 1, running, messages };
}

describe('applyChatEvent', () => {
  test('a run: user message, streamed text, a tool call, the final message, the end', () => {
    const done = message('a1', {
      status: 'complete',
      parts: [
        { type: 'text', text: 'Let me look.' },
        {
          type: 'tool-call',
          callId: 'k1',
          name: 'read_file',
          arguments: { path: 'a' },
          status: 'done',
          result: { isError: false, text: 'x', durationMs: 3 },
        },
      ],
    });
    let view = apply(ready(), [
      { kind: 'message-added', message: user },
      { kind: 'message-added', message: message('a1') },
      { kind: 'text-delta', messageId: 'a1', text: 'Let ' },
      { kind: 'text-delta', messageId: 'a1', text: 'me look.' },
      {
        kind: 'tool-call-started',
        messageId: 'a1',
        callId: 'k1',
        name: 'read_file',
        arguments: { path: 'a' },
      },
    ]);
    expect(view.running).toBe(true);
    expect(view.messages[1]!.parts).toEqual([
      { type: 'text', text: 'Let me look.' },
      {
        type: 'tool-call',
        callId: 'k1',
        name: 'read_file',
        arguments: { path: 'a' },
        status: 'running',
        result: null,
      },
    ]);
    view = apply(view, [
      {
        kind: 'tool-call-finished',
        messageId: 'a1',
        callId: 'k1',
        status: 'done',
        result: { isError: false, text: 'x', durationMs: 3 },
      },
      { kind: 'retrying', attempt: 1, delayMs: 1000, reason: 'rate limited' },
    ]);
    expect(view.messages[1]).toEqual({ ...done, status: 'streaming' });
    expect(view.retry).toMatchObject({ attempt: 1, reason: 'rate limited' });
    view = apply(view, [
      { kind: 'message-finished', message: done },
      { kind: 'run-finished', outcome: 'complete', error: null },
    ]);
    expect(view.messages[1]).toEqual(done);
    expect(view).toMatchObject({ running: false, retry: null, lastRun: { outcome: 'complete' } });
  });

  test('events while loading are buffered and replayed without doubling stored text', () => {
    let view = loadingConversation('c1');
    view = apply(view, [
      { kind: 'text-delta', messageId: 'a1', text: 'Hel' },
      { kind: 'text-delta', messageId: 'a2', text: 'lo' },
    ]);
    expect(view.buffered).toHaveLength(2);
    // a1's stream was over when it was loaded (its text is stored); a2 still streams.
    const loaded = mergeLoaded(
      view,
      conversation(
        [user, message('a1', { parts: [{ type: 'text', text: 'Hel' }] }), message('a2')],
        true,
      ),
      0,
    );
    expect(loaded.load).toBe('ready');
    expect(loaded.buffered).toEqual([]);
    expect(loaded.running).toBe(true);
    expect(loaded.messages[1]!.parts).toEqual([{ type: 'text', text: 'Hel' }]);
    expect(loaded.messages[2]!.parts).toEqual([{ type: 'text', text: 'lo' }]);
  });

  test('a run error stored in a message is not shown a second time', () => {
    const failed = message('a1', { status: 'error', error: 'bad key' });
    const view = apply(ready([user]), [
      { kind: 'message-added', message: failed },
      { kind: 'message-finished', message: failed },
      { kind: 'run-finished', outcome: 'error', error: 'bad key' },
    ]);
    expect(unshownRunError(view)).toBeNull();
    const limit = apply(ready([user]), [
      { kind: 'run-finished', outcome: 'step-limit', error: 'too many steps' },
    ]);
    expect(unshownRunError(limit)).toBe('too many steps');
  });
});
