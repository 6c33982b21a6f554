// The conversation itself: user and assistant messages (markdown), each tool call inline as a
// collapsible row (tool, arguments, result, duration, error), the state of a message (streaming,
// stopped, error) and the notices of the run (retrying after a rate limit, a run error). Keeps the
// newest message in view while the user has not scrolled up.
import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import type { ChatMessage, ChatToolCallPart } from '../../../shared/chat.ts';
import { duration, timeOfDay } from '../common/format.ts';
import { ChatMarkdown } from './chat-markdown.tsx';
import { unshownRunError, type ConversationView, type RetryNotice } from './chat-state.ts';

/** Pixels from the bottom within which the log follows new text. */
const FOLLOW_SLACK_PX = 48;

export function ChatLog({ view, empty }: { view: ConversationView; empty: ReactNode }) {
  const logRef = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const runError = unshownRunError(view);
  const last = view.messages.at(-1);
  const waiting =
    view.running && (last === undefined || last.role === 'user' || last.status !== 'streaming');

  useLayoutEffect(() => {
    const log = logRef.current;
    if (log && following.current) log.scrollTop = log.scrollHeight;
  });

  return (
    <div
      ref={logRef}
      className="chat-log"
      role="log"
      aria-label="Messages"
      aria-busy={view.running || undefined}
      tabIndex={0}
      onScroll={(event) => {
        const log = event.currentTarget;
        following.current = log.scrollHeight - log.scrollTop - log.clientHeight < FOLLOW_SLACK_PX;
      }}
    >
      {view.messages.length === 0 && !view.running ? (
        empty
      ) : (
        <div className="chat-log__inner">
          {view.messages.map((message, index) => (
            <Message
              key={message.id}
              message={message}
              latest={index === view.messages.length - 1}
              continued={
                message.role === 'assistant' && view.messages[index - 1]?.role === 'assistant'
              }
            />
          ))}
          {waiting && view.retry === null && (
            <p className="chat-waiting" role="status">
              <span className="chat-dots" aria-hidden="true">
                <span />
                <span />
                <span />
              </span>
              Waiting for the model…
            </p>
          )}
          {view.retry && <RetryBanner retry={view.retry} />}
          {view.lastRun?.outcome === 'step-limit' || runError ? (
            <p className="chat-notice chat-notice--error" role="alert">
              {runError ?? 'The model used too many tool steps.'}
            </p>
          ) : null}
        </div>
      )}
    </div>
  );
}

/**
 * One message. `continued`: an assistant message right after another (the next step of the same
 * answer) shows without its own header, unless it has a state to show.
 */
function Message({
  message,
  latest,
  continued,
}: {
  message: ChatMessage;
  latest: boolean;
  continued: boolean;
}) {
  const user = message.role === 'user';
  const label = user ? 'You' : 'Assistant';
  const empty = message.parts.length === 0;
  const quiet = continued && message.status === 'complete';
  return (
    <article
      className={`chat-message chat-message--${message.role} chat-message--${message.status}${quiet ? ' chat-message--continued' : ''}`}
      aria-label={`${label}, ${timeOfDay(message.createdAt)}`}
    >
      <header className={quiet ? 'visually-hidden' : 'chat-message__header'}>
        <span className="chat-message__avatar" aria-hidden="true">
          {user ? 'Y' : 'G'}
        </span>
        <span className="chat-message__role">{label}</span>
        <time className="chat-message__time" dateTime={new Date(message.createdAt).toISOString()}>
          {timeOfDay(message.createdAt)}
        </time>
        {message.status === 'stopped' && <span className="chat-badge">Stopped</span>}
        {message.status === 'streaming' && (
          <span className="chat-badge chat-badge--live">
            <span className="chat-pulse" aria-hidden="true" />
            Answering
          </span>
        )}
      </header>
      <div className="chat-message__body">
        {message.parts.map((part, index) =>
          part.type === 'text' ? (
            user ? (
              <p key={index} className="chat-message__plain">
                {part.text}
              </p>
            ) : (
              <ChatMarkdown key={index} text={part.text} />
            )
          ) : (
            <ToolCall key={part.callId} part={part} />
          ),
        )}
        {empty && message.status === 'stopped' && (
          <p className="muted chat-message__note">Stopped before the model wrote anything.</p>
        )}
        {message.status === 'error' && (
          <div className="chat-error" role={latest ? 'alert' : undefined}>
            <span className="chat-error__icon" aria-hidden="true">
              !
            </span>
            <div>
              <p className="chat-error__title">The model could not answer</p>
              <p className="chat-error__detail">{message.error ?? 'Unknown error.'}</p>
            </div>
          </div>
        )}
      </div>
    </article>
  );
}

const STATUS_TEXT: Record<ChatToolCallPart['status'], string> = {
  running: 'running',
  done: 'done',
  error: 'failed',
  stopped: 'stopped',
};

function ToolCall({ part }: { part: ChatToolCallPart }) {
  const [open, setOpen] = useState(part.status === 'error');
  const args = JSON.stringify(part.arguments);
  const result = part.result;
  return (
    <details
      className={`chat-tool chat-tool--${part.status}`}
      open={open}
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary className="chat-tool__summary">
        <span className="chat-tool__icon" aria-hidden="true">
          {part.status === 'running' ? (
            <span className="spinner spinner--small" />
          ) : part.status === 'done' ? (
            '✓'
          ) : part.status === 'error' ? (
            '✕'
          ) : (
            '■'
          )}
        </span>
        <span className="visually-hidden">Tool call </span>
        <code className="chat-tool__name">{part.name}</code>
        <code className="chat-tool__args" title={args}>
          {args === '{}' ? '' : args}
        </code>
        <span className="chat-tool__status">
          {STATUS_TEXT[part.status]}
          {result ? ` · ${duration(result.durationMs)}` : ''}
        </span>
      </summary>
      <div className="chat-tool__body">
        <h4 className="chat-tool__label">Arguments</h4>
        <pre
          className="code-block chat-tool__code"
          aria-label={`Arguments of ${part.name}`}
          tabIndex={0}
        >
          {JSON.stringify(part.arguments, null, 2)}
        </pre>
        <h4 className="chat-tool__label">
          {result?.isError ? (part.status === 'stopped' ? 'Stopped' : 'Error') : 'Result'}
        </h4>
        {result ? (
          <pre
            className={
              result.isError
                ? 'code-block chat-tool__code chat-tool__code--error'
                : 'code-block chat-tool__code'
            }
            aria-label={`Result of ${part.name}`}
            tabIndex={0}
          >
            {prettyResult(result.text)}
          </pre>
        ) : (
          <p className="muted">Running…</p>
        )}
      </div>
    </details>
  );
}

function RetryBanner({ retry }: { retry: RetryNotice }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const left = Math.max(0, Math.ceil((retry.at + retry.delayMs - now) / 1000));
  return (
    <p className="chat-notice chat-notice--warn" role="status">
      <strong>Retrying</strong> (attempt {retry.attempt}) {left > 0 ? `in ${left} s` : 'now'} —{' '}
      {retry.reason}
    </p>
  );
}

/** A JSON result (the server's structured content) pretty-printed; any other text as it is. */
function prettyResult(text: string): string {
  if (!text) return '(empty)';
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return text;
  }
}
