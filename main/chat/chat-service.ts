// The chat service the Host owns: settings, conversations per worktree, and at most one running
// answer per conversation (an AbortController each, for Stop). Every HostApi chat command
// delegates here; progress goes out as `chat` HostEvents. User-fixable failures (no model chosen,
// server not running, no `reconcile` prompt) are UserErrors with a clear message.
import type Database from 'better-sqlite3';
import type {
  ChatConversation,
  ChatConversationSummary,
  ChatEvent,
  ChatHostEvent,
  ChatMessage,
  ChatSettingsChange,
  ChatSettingsView,
} from '../../shared/chat.ts';
import { runAgent, type RetryPolicy, type RunResult } from './agent-loop.ts';
import { AnthropicProvider } from './anthropic-provider.ts';
import { ChatMcpClient, type ChatHostView } from './chat-mcp-client.ts';
import { UserError } from '../platform/errors.ts';
import {
  ChatSettings,
  memorySecretSource,
  type ResolvedChatSettings,
  type SecretSource,
} from './chat-settings.ts';
import { ConversationStore, type ConversationRow } from './conversation-store.ts';
import { OpenAiProvider } from './openai-provider.ts';
import type { ChatProvider } from './provider.ts';

export type { SecretSource } from './chat-settings.ts';

export interface ChatServiceOptions {
  /** Where the API key is kept (default: memory only, for the host's lifetime). */
  secrets?: SecretSource;
  /** Environment with `GROVE_LLM_*` overrides (default process.env). */
  env?: Record<string, string | undefined>;
  /** Model responses per run before it is stopped (default 12). */
  maxSteps?: number;
  /** Rate-limit backoff (defaults: 3 retries from 1 s, doubling, at most 30 s each). */
  retry?: Partial<RetryPolicy>;
  /** Anthropic's max_tokens per response (default 8192). */
  maxTokens?: number;
  /** Bound on the provider's connect and each wait for data (default 120 s). */
  providerTimeoutMs?: number;
}

const NEW_TITLE = 'New conversation';
export const RECONCILE_PROMPT = 'reconcile';

interface ActiveRun {
  controller: AbortController;
  done: Promise<RunResult>;
}

export class ChatService {
  readonly #host: ChatHostView;
  readonly #emit: (event: ChatHostEvent) => void;
  readonly #options: ChatServiceOptions;
  readonly #settings: ChatSettings;
  readonly #store: ConversationStore;
  readonly #mcp: ChatMcpClient;
  readonly #runs = new Map<string, ActiveRun>();
  #closed = false;

  constructor(args: {
    host: ChatHostView;
    db: Database.Database;
    emit: (event: ChatHostEvent) => void;
    options?: ChatServiceOptions;
  }) {
    this.#host = args.host;
    this.#emit = args.emit;
    this.#options = args.options ?? {};
    this.#settings = new ChatSettings(
      args.db,
      this.#options.secrets ?? memorySecretSource(),
      this.#options.env,
    );
    this.#store = new ConversationStore(args.db);
    this.#mcp = new ChatMcpClient(args.host);
  }

  getSettings(): Promise<ChatSettingsView> {
    return this.#settings.view();
  }

  async setSettings(change: ChatSettingsChange): Promise<ChatSettingsView> {
    try {
      return await this.#settings.change(change);
    } catch (error) {
      // e.g. the system keychain is unavailable: the user has to know the key was not kept.
      const reason = error instanceof Error ? error.message : String(error);
      throw new UserError(`The chat settings could not be saved: ${reason}`);
    }
  }

  listConversations(worktreeId: string): ChatConversationSummary[] {
    this.#requireWorktree(worktreeId);
    return this.#store.listConversations(worktreeId).map((row) => this.#summary(row));
  }

  getConversation(worktreeId: string, conversationId: string): ChatConversation {
    const row = this.#conversation(worktreeId, conversationId);
    return { ...this.#summary(row), messages: this.#store.listMessages(conversationId) };
  }

  newConversation(worktreeId: string, title?: string): ChatConversationSummary {
    this.#requireWorktree(worktreeId);
    return this.#summary(this.#store.createConversation(worktreeId, title?.trim() || NEW_TITLE));
  }

  async deleteConversation(worktreeId: string, conversationId: string): Promise<void> {
    this.#conversation(worktreeId, conversationId);
    const run = this.#runs.get(conversationId);
    if (run) {
      run.controller.abort();
      await run.done;
    }
    this.#store.deleteConversation(conversationId);
  }

  /**
   * Stores the user's message and starts the answer in the background; `done` settles when the
   * run is over (it never rejects).
   */
  async send(
    worktreeId: string,
    conversationId: string,
    text: string,
  ): Promise<{ message: ChatMessage; done: Promise<RunResult> }> {
    const row = this.#conversation(worktreeId, conversationId);
    if (this.#runs.has(conversationId)) {
      throw new UserError('The model is still answering in this conversation: stop it first.');
    }
    const settings = await this.#settings.resolve();
    const provider = this.#provider(settings);
    this.#mcp.requireRunning(worktreeId);
    if (this.#runs.has(conversationId)) {
      throw new UserError('The model is still answering in this conversation: stop it first.');
    }
    const message = this.#store.addMessage(conversationId, {
      role: 'user',
      status: 'complete',
      parts: [{ type: 'text', text }],
      error: null,
    });
    if (row.title === NEW_TITLE) this.#store.setTitle(conversationId, titleFrom(text));
    this.#emitChat(worktreeId, conversationId, { kind: 'message-added', message });
    const controller = new AbortController();
    const done = runAgent({
      worktreeId,
      conversationId,
      store: this.#store,
      mcp: this.#mcp,
      provider,
      model: settings.model,
      system: this.#systemPrompt(worktreeId),
      maxTokens: this.#options.maxTokens ?? 8192,
      maxSteps: this.#options.maxSteps ?? 12,
      retry: { maxRetries: 3, baseMs: 1000, maxMs: 30_000, ...this.#options.retry },
      signal: controller.signal,
      emit: (event) => this.#emitChat(worktreeId, conversationId, event),
    })
      .catch((error: unknown): RunResult => {
        const text = error instanceof Error ? error.message : String(error);
        return { outcome: 'error', error: `The chat failed: ${text}` };
      })
      .then((result) => {
        this.#runs.delete(conversationId);
        this.#emitChat(worktreeId, conversationId, { kind: 'run-finished', ...result });
        return result;
      });
    this.#runs.set(conversationId, { controller, done });
    return { message, done };
  }

  /** Stops the conversation's running answer; resolves once it has settled. */
  async stop(worktreeId: string, conversationId: string): Promise<boolean> {
    this.#conversation(worktreeId, conversationId);
    const run = this.#runs.get(conversationId);
    if (!run) return false;
    run.controller.abort();
    await run.done;
    return true;
  }

  /** Starts a conversation from the server's `reconcile` prompt. */
  async startReconcile(
    worktreeId: string,
    conversationId?: string,
  ): Promise<{
    conversation: ChatConversationSummary;
    message: ChatMessage;
    done: Promise<RunResult>;
  }> {
    if (conversationId) this.#conversation(worktreeId, conversationId);
    else this.#requireWorktree(worktreeId);
    this.#provider(await this.#settings.resolve()); // settings problems first
    const signal = AbortSignal.timeout(15_000);
    const prompt = await this.#mcp.getPrompt(worktreeId, RECONCILE_PROMPT, signal);
    if (!prompt) {
      throw new UserError(
        `This worktree's MCP server offers no "${RECONCILE_PROMPT}" prompt, so there is nothing to ` +
          'reconcile from (this Grove version may not have it yet).',
      );
    }
    if (!prompt.text.trim()) {
      throw new UserError(`The server's "${RECONCILE_PROMPT}" prompt is empty.`);
    }
    const id = conversationId ?? this.#store.createConversation(worktreeId, 'Reconcile').id;
    const { message, done } = await this.send(worktreeId, id, prompt.text);
    return { conversation: this.#summary(this.#store.getConversation(id)!), message, done };
  }

  /** Resolves when the conversation has no running answer. */
  async whenIdle(conversationId: string): Promise<void> {
    await this.#runs.get(conversationId)?.done;
  }

  /** Stops every run and closes the MCP sessions. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const runs = [...this.#runs.values()];
    for (const run of runs) run.controller.abort();
    await Promise.all(runs.map((run) => run.done));
    await this.#mcp.close();
  }

  #provider(settings: ResolvedChatSettings): ChatProvider {
    if (this.#closed) throw new UserError('the chat is closed');
    if (!settings.model) {
      throw new UserError('Choose a model in the chat settings first.');
    }
    const timeoutMs = this.#options.providerTimeoutMs;
    if (settings.provider === 'anthropic') {
      if (!settings.apiKey) {
        throw new UserError('Set an Anthropic API key in the chat settings first.');
      }
      return new AnthropicProvider({
        baseUrl: settings.baseUrl,
        apiKey: settings.apiKey,
        timeoutMs,
      });
    }
    return new OpenAiProvider({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, timeoutMs });
  }

  #systemPrompt(worktreeId: string): string {
    const worktree = this.#requireWorktree(worktreeId);
    return [
      'You are the assistant in Grove, a desktop app that serves one git worktree to AI tools.',
      `You work in the worktree at ${worktree.path} (branch ${worktree.branch ?? 'detached HEAD'}).`,
      "Use the tools to read and search the worktree's files; they are read-only and sandboxed to",
      'the worktree, and paths are relative to its root. Answer in Markdown; cite file paths.',
    ].join(' ');
  }

  #requireWorktree(worktreeId: string) {
    const worktree = this.#host
      .snapshot()
      .repos.flatMap((repo) => repo.worktrees)
      .find((w) => w.id === worktreeId);
    if (!worktree) throw new UserError(`unknown worktree id: ${worktreeId}`, { code: 'not-found' });
    return worktree;
  }

  #conversation(worktreeId: string, conversationId: string): ConversationRow {
    const row = this.#store.getConversation(conversationId);
    if (!row || row.worktreeId !== worktreeId) {
      throw new UserError(`unknown conversation ${conversationId} in worktree ${worktreeId}`);
    }
    return row;
  }

  #summary(row: ConversationRow): ChatConversationSummary {
    return { ...row, running: this.#runs.has(row.id) };
  }

  #emitChat(worktreeId: string, conversationId: string, event: ChatEvent): void {
    this.#emit({ type: 'chat', worktreeId, conversationId, event });
  }
}

function titleFrom(text: string): string {
  const line = text.trim().split('\n')[0]!.trim();
  return line.length > 60 ? `${line.slice(0, 57)}…` : line || NEW_TITLE;
}
