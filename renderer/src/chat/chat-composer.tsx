// The message box: a text area labelled "Message" (Enter sends, Shift+Enter starts a new line,
// nothing is sent mid-IME-composition), Send, and Stop while the model answers. The text is
// cleared only once the host has taken the message.
import { useId, useState } from 'react';

export interface ChatComposerProps {
  running: boolean;
  /** A send or stop is in flight. */
  busy: boolean;
  /** Why nothing can be sent now (server stopped, host unreachable), or null. */
  blocked: string | null;
  onSend(text: string): Promise<boolean>;
  onStop(): void;
}

export function ChatComposer({ running, busy, blocked, onSend, onStop }: ChatComposerProps) {
  const inputId = useId();
  const hintId = useId();
  const [text, setText] = useState('');
  const canSend = text.trim() !== '' && !running && !busy && blocked === null;

  const send = async (): Promise<void> => {
    if (!canSend) return;
    if (await onSend(text.trim())) setText('');
  };

  return (
    <form
      className="chat-composer"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <label htmlFor={inputId} className="visually-hidden">
        Message
      </label>
      <textarea
        id={inputId}
        className="chat-composer__input"
        rows={Math.min(8, Math.max(2, text.split('\n').length))}
        placeholder="Ask about this worktree…"
        value={text}
        aria-describedby={hintId}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            void send();
          }
        }}
      />
      <div className="chat-composer__bar">
        <span id={hintId} className="chat-composer__hint">
          {blocked ?? (
            <>
              <kbd>Enter</kbd> to send · <kbd>Shift</kbd>+<kbd>Enter</kbd> for a new line
            </>
          )}
        </span>
        <button type="button" className="button" disabled={!running || busy} onClick={onStop}>
          <span className="chat-stop-icon" aria-hidden="true" />
          Stop
        </button>
        <button type="submit" className="button button--primary" disabled={!canSend}>
          Send
        </button>
      </div>
    </form>
  );
}
