// The chat panel's contract: provider settings as the UI sees them (never the API key itself),
// conversations and their messages, and the stream of chat events the host pushes while a model
// answers. The chat runs in the host (main/chat/); the renderer only sends commands and mirrors
// these events. No Node, DOM or Electron imports: this folder is the contract.
import { z } from 'zod';

export const ChatProviderKindSchema = z.enum(['anthropic', 'openai']);
export type ChatProviderKind = z.infer<typeof ChatProviderKindSchema>;

/** The base URL used when none is set, per provider. */
export const DEFAULT_CHAT_BASE_URLS: Record<ChatProviderKind, string> = {
  anthropic: 'https://api.anthropic.com',
  openai: 'https://api.openai.com/v1',
};

/** Provider settings as returned to the UI: the key is never included, only whether one is set. */
export const ChatSettingsViewSchema = z.object({
  provider: ChatProviderKindSchema,
  /** The base URL in use (the provider's default when none was set). */
  baseUrl: z.string(),
  /** True when `baseUrl` is the provider's default. */
  baseUrlIsDefault: z.boolean(),
  /** Empty until the user chooses one. */
  model: z.string(),
  apiKeySet: z.boolean(),
  /** Settings fixed by `GROVE_LLM_*` environment variables; changing them in the UI has no effect. */
  fromEnvironment: z.array(z.enum(['provider', 'baseUrl', 'model', 'apiKey'])),
  /** False when a key set from the UI is kept in memory only (headless host, no secret store). */
  apiKeyPersisted: z.boolean(),
});
export type ChatSettingsView = z.infer<typeof ChatSettingsViewSchema>;

/** Changes to the settings; absent fields stay as they are, `null` clears (back to the default). */
export const ChatSettingsChangeSchema = z.object({
  provider: ChatProviderKindSchema.optional(),
  baseUrl: z.url().nullable().optional(),
  model: z.string().nullable().optional(),
  /** Write-only. */
  apiKey: z.string().min(1).nullable().optional(),
});
export type ChatSettingsChange = z.infer<typeof ChatSettingsChangeSchema>;

/** What a tool call returned, as shown inline and fed back to the model. */
export const ChatToolResultSchema = z.object({
  isError: z.boolean(),
  /** The result's text content (joined text blocks; other blocks summarized), possibly cut. */
  text: z.string(),
  durationMs: z.number(),
});
export type ChatToolResult = z.infer<typeof ChatToolResultSchema>;

/**
 * One piece of a message: text, or a tool call the model asked for with its arguments and (once it
 * ran) its result. `stopped`: the user pressed Stop before it finished (its result says so).
 */
export const ChatPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({
    type: z.literal('tool-call'),
    callId: z.string(),
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    status: z.enum(['running', 'done', 'error', 'stopped']),
    result: ChatToolResultSchema.nullable(),
  }),
]);
export type ChatPart = z.infer<typeof ChatPartSchema>;
export type ChatToolCallPart = Extract<ChatPart, { type: 'tool-call' }>;

/**
 * `streaming`: the model is still answering; `complete`; `stopped`: the user pressed Stop (partial
 * text kept); `error`: the provider or the server failed (see `error`).
 */
export const ChatMessageStatusSchema = z.enum(['streaming', 'complete', 'stopped', 'error']);
export type ChatMessageStatus = z.infer<typeof ChatMessageStatusSchema>;

/**
 * One message. A user message has one text part. Each model response (one step of the agent loop)
 * is one assistant message: its text and the tool calls it asked for, with their results.
 */
export const ChatMessageSchema = z.object({
  id: z.string(),
  conversationId: z.string(),
  role: z.enum(['user', 'assistant']),
  status: ChatMessageStatusSchema,
  parts: z.array(ChatPartSchema),
  /** A clear message for the user when `status` is `error` (bad key, rate limit, network ...). */
  error: z.string().nullable(),
  /** Unix ms. */
  createdAt: z.number(),
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const ChatConversationSummarySchema = z.object({
  id: z.string(),
  worktreeId: z.string(),
  title: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** True while the model is answering in this conversation. */
  running: z.boolean(),
});
export type ChatConversationSummary = z.infer<typeof ChatConversationSummarySchema>;

export const ChatConversationSchema = ChatConversationSummarySchema.extend({
  messages: z.array(ChatMessageSchema),
});
export type ChatConversation = z.infer<typeof ChatConversationSchema>;

/**
 * How a run (the model answering one user message, over as many tool steps as it needs) ended:
 * `complete`, `stopped` by the user, `error` (see `error`), or `step-limit` (too many tool steps).
 */
export const ChatRunOutcomeSchema = z.enum(['complete', 'stopped', 'error', 'step-limit']);
export type ChatRunOutcome = z.infer<typeof ChatRunOutcomeSchema>;

/** What happens in a conversation while the model answers, in order. */
export const ChatEventSchema = z.discriminatedUnion('kind', [
  /** A message was stored: the user's, or a new assistant message (status `streaming`). */
  z.object({ kind: z.literal('message-added'), message: ChatMessageSchema }),
  /** More text of a streaming assistant message. */
  z.object({ kind: z.literal('text-delta'), messageId: z.string(), text: z.string() }),
  /** The model asked for a tool call and it is running now. */
  z.object({
    kind: z.literal('tool-call-started'),
    messageId: z.string(),
    callId: z.string(),
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  }),
  z.object({
    kind: z.literal('tool-call-finished'),
    messageId: z.string(),
    callId: z.string(),
    status: z.enum(['done', 'error', 'stopped']),
    result: ChatToolResultSchema,
  }),
  /** The provider rate-limited (or was overloaded): the host waits `delayMs` and tries again. */
  z.object({
    kind: z.literal('retrying'),
    attempt: z.number().int(),
    delayMs: z.number(),
    reason: z.string(),
  }),
  /** An assistant message reached its final state (the full message, authoritative). */
  z.object({ kind: z.literal('message-finished'), message: ChatMessageSchema }),
  /** The run is over; the conversation accepts a new message. */
  z.object({
    kind: z.literal('run-finished'),
    outcome: ChatRunOutcomeSchema,
    error: z.string().nullable(),
  }),
]);
export type ChatEvent = z.infer<typeof ChatEventSchema>;

/** The HostEvent that carries a ChatEvent (see HostEventSchema in host-api.ts). */
export const ChatHostEventSchema = z.object({
  type: z.literal('chat'),
  worktreeId: z.string(),
  conversationId: z.string(),
  event: ChatEventSchema,
});
export type ChatHostEvent = z.infer<typeof ChatHostEventSchema>;

const ConversationRef = z.object({
  worktreeId: z.string().min(1),
  conversationId: z.string().min(1),
});

/** The chat's HostApi commands (spread into `hostCommands`). */
export const chatCommands = {
  getChatSettings: { input: z.object({}), output: ChatSettingsViewSchema },
  setChatSettings: { input: ChatSettingsChangeSchema, output: ChatSettingsViewSchema },
  /** A worktree's conversations, most recently updated first. */
  listConversations: {
    input: z.object({ worktreeId: z.string().min(1) }),
    output: z.object({ conversations: z.array(ChatConversationSummarySchema) }),
  },
  getConversation: { input: ConversationRef, output: ChatConversationSchema },
  newConversation: {
    input: z.object({ worktreeId: z.string().min(1), title: z.string().optional() }),
    output: ChatConversationSummarySchema,
  },
  deleteConversation: { input: ConversationRef, output: z.object({ ok: z.literal(true) }) },
  /**
   * Stores the user's message and starts the model's answer in the background: progress arrives
   * as `chat` events, ending with `run-finished`. Refused while the conversation is running.
   */
  sendChatMessage: {
    input: ConversationRef.extend({ text: z.string().min(1) }),
    output: z.object({ message: ChatMessageSchema }),
  },
  /** Stops the running answer (model stream and tool call); `stopped: false` if none ran. */
  stopChat: { input: ConversationRef, output: z.object({ stopped: z.boolean() }) },
  /**
   * Starts a conversation (a new one unless `conversationId` is given) from the server's
   * `reconcile` prompt; refused with a clear message if the server offers no such prompt.
   */
  startReconcileChat: {
    input: z.object({
      worktreeId: z.string().min(1),
      conversationId: z.string().min(1).optional(),
    }),
    output: z.object({ conversation: ChatConversationSummarySchema, message: ChatMessageSchema }),
  },
} as const;
