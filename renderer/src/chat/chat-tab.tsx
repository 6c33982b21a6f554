// The Chat tab of a worktree: its conversations (New conversation, Reconcile, delete), the selected
// conversation's messages with tool calls inline, the message box with Send and Stop, and the
// provider settings. State comes from the ChatStore (chat-store.ts), fed by host events.
import { useEffect, useId, useState, useSyncExternalStore } from 'react';
import type { ChatConversationSummary } from '../../../shared/chat.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import { relativeTime } from '../common/format.ts';
import { useHostStore } from '../common/store-context.tsx';
import { useNow } from '../common/use-now.ts';
import { ChatComposer } from './chat-composer.tsx';
import { ChatLog } from './chat-messages.tsx';
import { ChatSettingsForm } from './chat-settings-form.tsx';
import type { ConversationView } from './chat-state.ts';
import { chatStoreFor, type SettingsState, type WorktreeChat } from './chat-store.ts';
import { ConfirmDialog } from '../common/confirm-dialog.tsx';

export function ChatTab({ worktree, live }: { worktree: WorktreeState; live: boolean }) {
  const store = chatStoreFor(useHostStore());
  const state = useSyncExternalStore(store.subscribe, store.getState);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const settingsId = useId();
  const headingId = useId();

  useEffect(() => store.open(worktree.id), [store, worktree.id]);

  const chat = store.worktree(worktree.id);
  const selected =
    chat.list.state === 'ready'
      ? (chat.list.conversations.find((c) => c.id === chat.selectedId) ?? null)
      : null;
  const view = chat.selectedId ? state.conversations[chat.selectedId] : undefined;
  const settings = state.settings;
  const unconfigured = settings.state === 'ready' && settings.view.model === '';
  const running = view?.running ?? false;
  const blocked = !live
    ? 'Grove is not connected to its host.'
    : worktree.status.state !== 'running'
      ? "Start this worktree's server (Server tab) to chat."
      : unconfigured
        ? 'Choose a model in the chat settings first.'
        : null;

  return (
    <div className="chat">
      <ConversationSidebar
        worktreeId={worktree.id}
        chat={chat}
        reconcileBlocked={blocked}
        onNew={() => void store.newConversation(worktree.id)}
        onReconcile={() => void store.reconcile(worktree.id)}
        onSelect={(id) => store.select(worktree.id, id)}
        onDelete={(id) => void store.deleteConversation(worktree.id, id)}
      />
      <section className="chat__main" aria-labelledby={headingId}>
        <header className="chat__header">
          <h3 id={headingId} className="chat__title">
            {selected?.title ?? 'Chat'}
          </h3>
          <ProviderChip settings={settings} />
          <button
            type="button"
            className={
              settingsOpen ? 'button button--small chat__gear--on' : 'button button--small'
            }
            aria-expanded={settingsOpen}
            aria-controls={settingsId}
            onClick={() => setSettingsOpen((open) => !open)}
          >
            Chat settings
          </button>
        </header>
        <div id={settingsId} className="chat__settings-slot" hidden={!settingsOpen}>
          {settingsOpen && (
            <SettingsPanel
              settings={settings}
              onRetry={() => void store.loadSettings()}
              onSave={(change) => store.saveSettings(change)}
              onClose={() => setSettingsOpen(false)}
            />
          )}
        </div>
        {chat.actionError && (
          <p className="chat-notice chat-notice--error chat__action-error" role="alert">
            {chat.actionError}
          </p>
        )}
        <Conversation
          chat={chat}
          view={view}
          unconfigured={unconfigured}
          onOpenSettings={() => setSettingsOpen(true)}
          onRetry={() =>
            chat.selectedId && void store.loadConversation(worktree.id, chat.selectedId)
          }
        />
        <ChatComposer
          key={worktree.id}
          running={running}
          busy={chat.action === 'send' || chat.action === 'stop'}
          blocked={blocked}
          onSend={(text) => store.send(worktree.id, text)}
          onStop={() => void store.stop(worktree.id)}
        />
      </section>
    </div>
  );
}

function Conversation({
  chat,
  view,
  unconfigured,
  onOpenSettings,
  onRetry,
}: {
  chat: WorktreeChat;
  view: ConversationView | undefined;
  unconfigured: boolean;
  onOpenSettings(): void;
  onRetry(): void;
}) {
  const emptyState = (
    <div className="chat-empty">
      <div className="chat-empty__mark" aria-hidden="true" />
      <p className="chat-empty__title">Ask about this worktree</p>
      <p className="chat-empty__detail">
        The model can read and search this worktree's files through its MCP server. Every tool call
        shows here and in the Activity tab.
      </p>
      {unconfigured && (
        <button type="button" className="button button--primary" onClick={onOpenSettings}>
          Set up a model
        </button>
      )}
    </div>
  );
  if (chat.list.state === 'loading' || view?.load === 'loading') {
    return (
      <div className="chat-log chat-log--state" role="status">
        <span className="spinner" aria-hidden="true" />
        <p className="muted">Loading conversation…</p>
      </div>
    );
  }
  if (chat.list.state === 'error') {
    return (
      <div className="chat-log chat-log--state" role="alert">
        <p className="empty__title error-text">Could not load the conversations</p>
        <p className="muted">{chat.list.message}</p>
      </div>
    );
  }
  if (view?.load === 'error') {
    return (
      <div className="chat-log chat-log--state" role="alert">
        <p className="empty__title error-text">Could not load this conversation</p>
        <p className="muted">{view.loadError}</p>
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      </div>
    );
  }
  if (!view) {
    return (
      <div className="chat-log chat-log--state" role="log" aria-label="Messages">
        {emptyState}
      </div>
    );
  }
  return <ChatLog view={view} empty={emptyState} />;
}

function ConversationSidebar({
  worktreeId,
  chat,
  reconcileBlocked,
  onNew,
  onReconcile,
  onSelect,
  onDelete,
}: {
  worktreeId: string;
  chat: WorktreeChat;
  /** Why Reconcile cannot start now (shown beside it), or null. */
  reconcileBlocked: string | null;
  onNew(): void;
  onReconcile(): void;
  onSelect(id: string): void;
  onDelete(id: string): void;
}) {
  const now = useNow(15_000);
  const whyId = useId();
  const [confirming, setConfirming] = useState<string | null>(null);
  const conversations = chat.list.state === 'ready' ? chat.list.conversations : [];
  return (
    <nav className="chat__sidebar" aria-label="Conversations">
      <div className="chat__actions">
        <button
          type="button"
          className="button button--primary chat__new"
          disabled={chat.action !== null}
          onClick={onNew}
        >
          <span aria-hidden="true">+</span> New conversation
        </button>
        <button
          type="button"
          className="button chat__reconcile"
          disabled={chat.action !== null || reconcileBlocked !== null}
          title="Start a conversation from the server's reconcile prompt"
          aria-describedby={reconcileBlocked !== null ? whyId : undefined}
          onClick={onReconcile}
        >
          {chat.action === 'reconcile' ? 'Starting…' : 'Reconcile'}
        </button>
      </div>
      {/* The reason is said once, under the message box; here only to a screen reader. */}
      {reconcileBlocked !== null && (
        <p id={whyId} className="visually-hidden">
          Reconcile is unavailable: {reconcileBlocked}
        </p>
      )}
      {chat.list.state === 'ready' && conversations.length === 0 && (
        <p className="chat__none">No conversations yet.</p>
      )}
      <ul className="chat__list" key={worktreeId}>
        {conversations.map((c: ChatConversationSummary) => {
          const selected = c.id === chat.selectedId;
          return (
            <li key={c.id} className={selected ? 'chat-item chat-item--selected' : 'chat-item'}>
              <button
                type="button"
                className="chat-item__open"
                aria-current={selected ? 'true' : undefined}
                onClick={() => onSelect(c.id)}
              >
                <span className="chat-item__title">{c.title}</span>
                <span className="chat-item__meta">
                  {c.running && <span className="chat-pulse" aria-label="answering" role="img" />}
                  {relativeTime(c.updatedAt, now)}
                </span>
              </button>
              <button
                type="button"
                className="icon-button chat-item__delete"
                aria-label={`Delete conversation “${c.title}”`}
                disabled={c.running}
                onClick={() => setConfirming(c.id)}
              >
                ×
              </button>
              {confirming === c.id && (
                <ConfirmDialog
                  title={`Delete “${c.title}”?`}
                  confirmLabel="Delete"
                  onConfirm={() => {
                    setConfirming(null);
                    onDelete(c.id);
                  }}
                  onCancel={() => setConfirming(null)}
                >
                  <p>The conversation and its messages are deleted from this machine.</p>
                </ConfirmDialog>
              )}
            </li>
          );
        })}
      </ul>
    </nav>
  );
}

function ProviderChip({ settings }: { settings: SettingsState }) {
  if (settings.state !== 'ready') return null;
  const { provider, model } = settings.view;
  return (
    <span className="chat__chip" title={settings.view.baseUrl}>
      {provider === 'anthropic' ? 'Anthropic' : 'OpenAI-compatible'}
      {model ? ` · ${model}` : ' · no model'}
    </span>
  );
}

function SettingsPanel({
  settings,
  onRetry,
  onSave,
  onClose,
}: {
  settings: SettingsState;
  onRetry(): void;
  onSave: Parameters<typeof ChatSettingsForm>[0]['onSave'];
  onClose(): void;
}) {
  if (settings.state === 'loading') {
    return (
      <div className="chat-settings" role="status">
        <span className="spinner" aria-hidden="true" /> Loading settings…
      </div>
    );
  }
  if (settings.state === 'error') {
    return (
      <div className="chat-settings" role="alert">
        <p className="error-text">Could not load the chat settings: {settings.message}</p>
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      </div>
    );
  }
  return <ChatSettingsForm view={settings.view} onSave={onSave} onClose={onClose} />;
}
