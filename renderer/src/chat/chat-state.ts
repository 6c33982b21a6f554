// One conversation as the chat panel shows it, and the pure function that applies the host's chat
// events to it (message-added, text-delta, tool calls, retrying, message-finished, run-finished).
// A conversation is loaded once with getConversation; events that arrive while that request is in
// flight are buffered and replayed onto the answer (mergeLoaded), so nothing is lost or doubled.
import type {
  ChatConversation,
  ChatEvent,
  ChatMessage,
  ChatPart,
  ChatRunOutcome,
} from '../../../shared/chat.ts';

export interface RetryNotice {
  attempt: number;
  delayMs: number;
  reason: string;
  /** When the notice arrived (ms), to count the wait down. */
  at: number;
}

export interface ConversationView {
  id: string;
  load: 'loading' | 'ready' | 'error';
  loadError: string | null;
  messages: ChatMessage[];
  /** True while the model answers (from the host; the Stop button follows it). */
  running: boolean;
  retry: RetryNotice | null;
  /** How the last run in this panel ended (null until one ends, or once a new one starts). */
  lastRun: { outcome: ChatRunOutcome; error: string | null } | null;
  /** Events received while the conversation was loading, replayed onto the answer. */
  buffered: ChatEvent[];
}

export function loadingConversation(id: string): ConversationView {
  return {
    id,
    load: 'loading',
    loadError: null,
    messages: [],
    running: false,
    retry: null,
    lastRun: null,
    buffered: [],
  };
}

/**
 * The loaded conversation plus the events buffered while it loaded. The host stores a streaming
 * message's text only once its stream is over, so a buffered text-delta is replayed only onto a
 * message that still has no parts in the loaded copy; every other event is idempotent.
 */
export function mergeLoaded(
  view: ConversationView,
  conversation: ChatConversation,
  now: number,
): ConversationView {
  const base: ConversationView = {
    ...view,
    load: 'ready',
    loadError: null,
    messages: conversation.messages,
    running: conversation.running,
    buffered: [],
  };
  const stored = new Map(conversation.messages.map((m) => [m.id, m.parts.length]));
  return view.buffered.reduce((acc, event) => {
    if (event.kind === 'text-delta' && (stored.get(event.messageId) ?? 0) > 0) return acc;
    return applyChatEvent(acc, event, now);
  }, base);
}

/** Applies one chat event (pure: returns a new view, or the same one when nothing changed). */
export function applyChatEvent(
  view: ConversationView,
  event: ChatEvent,
  now: number,
): ConversationView {
  if (view.load === 'loading') return { ...view, buffered: [...view.buffered, event] };
  switch (event.kind) {
    case 'message-added': {
      const started = event.message.role === 'user';
      const known = view.messages.some((m) => m.id === event.message.id);
      return {
        ...view,
        messages: known ? view.messages : [...view.messages, event.message],
        running: true,
        retry: started ? null : view.retry,
        lastRun: started ? null : view.lastRun,
      };
    }
    case 'text-delta':
      return {
        ...updateMessage(view, event.messageId, (message) =>
          message.status === 'streaming'
            ? { ...message, parts: appendText(message.parts, event.text) }
            : message,
        ),
        retry: null,
      };
    case 'tool-call-started':
      return updateMessage(view, event.messageId, (message) => {
        const part: ChatPart = {
          type: 'tool-call',
          callId: event.callId,
          name: event.name,
          arguments: event.arguments,
          status: 'running',
          result: null,
        };
        const at = message.parts.findIndex(
          (p) => p.type === 'tool-call' && p.callId === event.callId,
        );
        if (at === -1) return { ...message, parts: [...message.parts, part] };
        const existing = message.parts[at]!;
        // A finished call (from the loaded copy) stays finished.
        if (existing.type === 'tool-call' && existing.status !== 'running') return message;
        return { ...message, parts: message.parts.map((p, i) => (i === at ? part : p)) };
      });
    case 'tool-call-finished':
      return updateMessage(view, event.messageId, (message) => ({
        ...message,
        parts: message.parts.map((p) =>
          p.type === 'tool-call' && p.callId === event.callId
            ? { ...p, status: event.status, result: event.result }
            : p,
        ),
      }));
    case 'retrying':
      return {
        ...view,
        retry: { attempt: event.attempt, delayMs: event.delayMs, reason: event.reason, at: now },
      };
    case 'message-finished': {
      const known = view.messages.some((m) => m.id === event.message.id);
      return {
        ...view,
        messages: known
          ? view.messages.map((m) => (m.id === event.message.id ? event.message : m))
          : [...view.messages, event.message],
        retry: null,
      };
    }
    case 'run-finished':
      return {
        ...view,
        running: false,
        retry: null,
        lastRun: { outcome: event.outcome, error: event.error },
      };
  }
}

function updateMessage(
  view: ConversationView,
  messageId: string,
  change: (message: ChatMessage) => ChatMessage,
): ConversationView {
  let changed = false;
  const messages = view.messages.map((message) => {
    if (message.id !== messageId) return message;
    const next = change(message);
    if (next !== message) changed = true;
    return next;
  });
  return changed ? { ...view, messages } : view;
}

function appendText(parts: readonly ChatPart[], text: string): ChatPart[] {
  const last = parts.at(-1);
  if (last?.type === 'text')
    return [...parts.slice(0, -1), { type: 'text', text: last.text + text }];
  return [...parts, { type: 'text', text }];
}

/**
 * The run's error when the messages do not already show it (a stored error message does), so it
 * is never shown twice; the step limit has no message of its own.
 */
export function unshownRunError(view: ConversationView): string | null {
  const error = view.lastRun?.error ?? null;
  if (error === null) return null;
  return view.messages.some((m) => m.error === error) ? null : error;
}
