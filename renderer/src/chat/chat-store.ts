// The chat panel's store: per worktree its conversation list, the selected conversation and the
// command in flight; per conversation its messages (chat-state.ts); the provider settings. Fed by
// the host's `chat` events (HostStore.onChatEvent) and by getConversation when a conversation is
// opened; a new snapshot (the event stream restarted) reloads what is open. Nothing polls. One
// ChatStore per HostStore (chatStoreFor); views read it with useSyncExternalStore.
import type {
  ChatConversationSummary,
  ChatSettingsChange,
  ChatSettingsView,
} from '../../../shared/chat.ts';
import type { ChatFeedEvent, HostStore } from '../store/host-store.ts';
import {
  applyChatEvent,
  loadingConversation,
  mergeLoaded,
  type ConversationView,
} from './chat-state.ts';

export type ChatAction = 'send' | 'stop' | 'new' | 'reconcile' | 'delete';

export type ConversationList =
  | { state: 'loading' }
  | { state: 'ready'; conversations: ChatConversationSummary[] }
  | { state: 'error'; message: string };

export interface WorktreeChat {
  list: ConversationList;
  selectedId: string | null;
  /** A command sent and not yet answered. */
  action: ChatAction | null;
  /** The last failed command's message (cleared by the next command). */
  actionError: string | null;
}

export type SettingsState =
  | { state: 'loading' }
  | { state: 'ready'; view: ChatSettingsView }
  | { state: 'error'; message: string };

export interface ChatStoreState {
  worktrees: Readonly<Record<string, WorktreeChat>>;
  conversations: Readonly<Record<string, ConversationView>>;
  settings: SettingsState;
}

const EMPTY_WORKTREE: WorktreeChat = {
  list: { state: 'loading' },
  selectedId: null,
  action: null,
  actionError: null,
};

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class ChatStore {
  readonly #host: HostStore;
  readonly #listeners = new Set<() => void>();
  /** Sequence of list requests per worktree: only the newest answer counts. */
  readonly #listSeq = new Map<string, number>();
  readonly #loadSeq = new Map<string, number>();
  #settingsRequested = false;
  #state: ChatStoreState = { worktrees: {}, conversations: {}, settings: { state: 'loading' } };

  constructor(host: HostStore) {
    this.#host = host;
    host.onChatEvent((event) => this.#onEvent(event));
  }

  readonly getState = (): ChatStoreState => this.#state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  worktree(worktreeId: string): WorktreeChat {
    return this.#state.worktrees[worktreeId] ?? EMPTY_WORKTREE;
  }

  /** Called when a worktree's chat is shown: loads its list (once) and the selected conversation. */
  open(worktreeId: string): void {
    if (!this.#state.worktrees[worktreeId]) {
      this.#setWorktree(worktreeId, EMPTY_WORKTREE);
      void this.refreshList(worktreeId);
    }
    if (!this.#settingsRequested) {
      this.#settingsRequested = true;
      void this.loadSettings();
    }
  }

  async refreshList(worktreeId: string): Promise<void> {
    const seq = (this.#listSeq.get(worktreeId) ?? 0) + 1;
    this.#listSeq.set(worktreeId, seq);
    let list: ConversationList;
    try {
      const { conversations } = await this.#host.commands.listConversations({ worktreeId });
      list = { state: 'ready', conversations };
    } catch (error) {
      list = { state: 'error', message: message(error) };
    }
    if (this.#listSeq.get(worktreeId) !== seq) return;
    const current = this.worktree(worktreeId);
    // Keep showing the last good list when a refresh fails.
    if (list.state === 'error' && current.list.state === 'ready') return;
    let selectedId = current.selectedId;
    if (list.state === 'ready' && !list.conversations.some((c) => c.id === selectedId)) {
      selectedId = list.conversations[0]?.id ?? null;
    }
    this.#setWorktree(worktreeId, { ...current, list, selectedId });
    if (selectedId) this.#ensureLoaded(worktreeId, selectedId);
  }

  select(worktreeId: string, conversationId: string): void {
    this.#setWorktree(worktreeId, { ...this.worktree(worktreeId), selectedId: conversationId });
    this.#ensureLoaded(worktreeId, conversationId);
  }

  /** Reloads a conversation from the host (after an error, or to resync). */
  async loadConversation(worktreeId: string, conversationId: string): Promise<void> {
    const seq = (this.#loadSeq.get(conversationId) ?? 0) + 1;
    this.#loadSeq.set(conversationId, seq);
    const previous = this.#state.conversations[conversationId];
    this.#setConversation({
      ...loadingConversation(conversationId),
      lastRun: previous?.lastRun ?? null,
    });
    try {
      const conversation = await this.#host.commands.getConversation({
        worktreeId,
        conversationId,
      });
      if (this.#loadSeq.get(conversationId) !== seq) return;
      const view = this.#state.conversations[conversationId];
      if (view) this.#setConversation(mergeLoaded(view, conversation, Date.now()));
    } catch (error) {
      if (this.#loadSeq.get(conversationId) !== seq) return;
      const view = this.#state.conversations[conversationId];
      if (view) this.#setConversation({ ...view, load: 'error', loadError: message(error) });
    }
  }

  newConversation(worktreeId: string): Promise<boolean> {
    return this.#act(worktreeId, 'new', async (api) => {
      const summary = await api.newConversation({ worktreeId });
      this.#addSummary(worktreeId, summary);
    });
  }

  /** Sends a message in the selected conversation (creating one if there is none). */
  send(worktreeId: string, text: string): Promise<boolean> {
    return this.#act(worktreeId, 'send', async (api) => {
      let conversationId = this.worktree(worktreeId).selectedId;
      if (!conversationId) {
        const summary = await api.newConversation({ worktreeId });
        this.#addSummary(worktreeId, summary);
        conversationId = summary.id;
      }
      await api.sendChatMessage({ worktreeId, conversationId, text });
    });
  }

  stop(worktreeId: string): Promise<boolean> {
    const conversationId = this.worktree(worktreeId).selectedId;
    if (!conversationId) return Promise.resolve(false);
    return this.#act(worktreeId, 'stop', async (api) => {
      await api.stopChat({ worktreeId, conversationId });
    });
  }

  reconcile(worktreeId: string): Promise<boolean> {
    return this.#act(worktreeId, 'reconcile', async (api) => {
      const { conversation } = await api.startReconcileChat({ worktreeId });
      this.#addSummary(worktreeId, conversation);
    });
  }

  deleteConversation(worktreeId: string, conversationId: string): Promise<boolean> {
    return this.#act(worktreeId, 'delete', async (api) => {
      await api.deleteConversation({ worktreeId, conversationId });
      const current = this.worktree(worktreeId);
      if (current.list.state === 'ready') {
        const conversations = current.list.conversations.filter((c) => c.id !== conversationId);
        this.#setWorktree(worktreeId, {
          ...current,
          list: { state: 'ready', conversations },
          selectedId:
            current.selectedId === conversationId
              ? (conversations[0]?.id ?? null)
              : current.selectedId,
        });
      }
      const selected = this.worktree(worktreeId).selectedId;
      if (selected) this.#ensureLoaded(worktreeId, selected);
    });
  }

  async loadSettings(): Promise<void> {
    this.#set({ ...this.#state, settings: { state: 'loading' } });
    try {
      const view = await this.#host.commands.getChatSettings({});
      this.#set({ ...this.#state, settings: { state: 'ready', view } });
    } catch (error) {
      this.#set({ ...this.#state, settings: { state: 'error', message: message(error) } });
    }
  }

  /** Saves settings; resolves to the error message, or null on success. */
  async saveSettings(change: ChatSettingsChange): Promise<string | null> {
    try {
      const view = await this.#host.commands.setChatSettings(change);
      this.#set({ ...this.#state, settings: { state: 'ready', view } });
      return null;
    } catch (error) {
      return message(error);
    }
  }

  async #act(
    worktreeId: string,
    action: ChatAction,
    run: (api: HostStore['commands']) => Promise<void>,
  ): Promise<boolean> {
    if (this.worktree(worktreeId).action) return false;
    this.#setWorktree(worktreeId, { ...this.worktree(worktreeId), action, actionError: null });
    let error: string | null = null;
    try {
      await run(this.#host.commands);
    } catch (caught) {
      error = message(caught);
    }
    this.#setWorktree(worktreeId, {
      ...this.worktree(worktreeId),
      action: null,
      actionError: error,
    });
    return error === null;
  }

  #addSummary(worktreeId: string, summary: ChatConversationSummary): void {
    const current = this.worktree(worktreeId);
    const others =
      current.list.state === 'ready'
        ? current.list.conversations.filter((c) => c.id !== summary.id)
        : [];
    this.#setWorktree(worktreeId, {
      ...current,
      list: { state: 'ready', conversations: [summary, ...others] },
      selectedId: summary.id,
    });
    this.#ensureLoaded(worktreeId, summary.id);
  }

  #ensureLoaded(worktreeId: string, conversationId: string): void {
    const view = this.#state.conversations[conversationId];
    if (!view || view.load === 'error') void this.loadConversation(worktreeId, conversationId);
  }

  #onEvent(event: ChatFeedEvent): void {
    if (event.type === 'snapshot') {
      // The event stream (re)started: events may have been missed while it was down.
      for (const worktreeId of Object.keys(this.#state.worktrees)) {
        void this.refreshList(worktreeId);
        const selected = this.worktree(worktreeId).selectedId;
        if (selected && this.#state.conversations[selected]) {
          void this.loadConversation(worktreeId, selected);
        }
      }
      return;
    }
    const { worktreeId, conversationId, event: chat } = event;
    const view = this.#state.conversations[conversationId];
    if (view) this.#setConversation(applyChatEvent(view, chat, Date.now()));

    const current = this.#state.worktrees[worktreeId];
    if (!current || current.list.state !== 'ready') return;
    const summary = current.list.conversations.find((c) => c.id === conversationId);
    const titleMayChange = chat.kind === 'message-added' && chat.message.role === 'user';
    if (!summary || titleMayChange || chat.kind === 'run-finished') {
      void this.refreshList(worktreeId);
    } else if (chat.kind === 'message-added' && !summary.running) {
      this.#setWorktree(worktreeId, {
        ...current,
        list: {
          state: 'ready',
          conversations: current.list.conversations.map((c) =>
            c.id === conversationId ? { ...c, running: true } : c,
          ),
        },
      });
    }
  }

  #setWorktree(worktreeId: string, chat: WorktreeChat): void {
    this.#set({ ...this.#state, worktrees: { ...this.#state.worktrees, [worktreeId]: chat } });
  }

  #setConversation(view: ConversationView): void {
    if (this.#state.conversations[view.id] === view) return;
    this.#set({
      ...this.#state,
      conversations: { ...this.#state.conversations, [view.id]: view },
    });
  }

  #set(state: ChatStoreState): void {
    this.#state = state;
    for (const listener of this.#listeners) listener();
  }
}

const stores = new WeakMap<HostStore, ChatStore>();

/** The one ChatStore of a HostStore (created on first use, lives as long as it). */
export function chatStoreFor(host: HostStore): ChatStore {
  let store = stores.get(host);
  if (!store) {
    store = new ChatStore(host);
    stores.set(host, store);
  }
  return store;
}
