// The one interface every LLM provider implements for the agent loop: a provider-neutral
// conversation (user text, assistant text + tool calls, tool results) in, a stream of text deltas
// and complete tool calls out. Provider failures become a ProviderError with a kind the loop acts
// on (retry a rate limit, report a bad key or an unreachable endpoint clearly).
import type { ChatProviderKind } from '../../shared/chat.ts';

export interface ModelTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: Record<string, unknown>;
}

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ModelToolResult {
  callId: string;
  name: string;
  text: string;
  isError: boolean;
}

export type ModelMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: ModelToolCall[] }
  | { role: 'tool-results'; results: ModelToolResult[] };

export interface ModelRequest {
  model: string;
  system: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  maxTokens: number;
}

export type ModelStreamEvent =
  | { type: 'text'; text: string }
  /** A tool call whose arguments are complete. */
  | { type: 'tool-call'; call: ModelToolCall };

export interface ModelResponse {
  text: string;
  toolCalls: ModelToolCall[];
  stopReason: 'end' | 'tool-use' | 'max-tokens' | 'other';
}

export interface ChatProvider {
  readonly kind: ChatProviderKind;
  /**
   * Streams one model response. Rejects with a ProviderError (kind `aborted` once `signal` fires;
   * the events already delivered are all the partial output there is).
   */
  stream(
    request: ModelRequest,
    signal: AbortSignal,
    onEvent: (event: ModelStreamEvent) => void,
  ): Promise<ModelResponse>;
}

export type ProviderErrorKind =
  'auth' | 'rate-limit' | 'overloaded' | 'network' | 'bad-request' | 'server' | 'aborted';

export class ProviderError extends Error {
  override name = 'ProviderError';
  readonly kind: ProviderErrorKind;
  readonly status: number | undefined;
  /** From a Retry-After header, when the provider sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    details: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: details.cause });
    this.kind = kind;
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
  }

  get retryable(): boolean {
    return this.kind === 'rate-limit' || this.kind === 'overloaded';
  }
}

const PROVIDER_NAMES: Record<ChatProviderKind, string> = {
  anthropic: 'Anthropic',
  openai: 'the OpenAI-compatible endpoint',
};

/** What an SDK's APIError carries (both SDKs' errors have this shape). */
interface ApiErrorLike {
  status?: number | undefined;
  headers?: Headers | undefined;
  message: string;
  /** The parsed error body. */
  error?: unknown;
}

/**
 * Turns an SDK error into a ProviderError with a message the user can act on. `isAbort` and
 * `isConnection` tell the SDK's own abort and connection error classes apart.
 */
export function classifyProviderError(
  error: unknown,
  context: {
    kind: ChatProviderKind;
    baseUrl: string;
    signal: AbortSignal;
    isAbort: boolean;
    isConnection: boolean;
  },
): ProviderError {
  if (error instanceof ProviderError) return error;
  const who = PROVIDER_NAMES[context.kind];
  if (context.signal.aborted || context.isAbort) {
    return new ProviderError('aborted', 'stopped', { cause: error });
  }
  const apiError = error as ApiErrorLike;
  const status = typeof apiError?.status === 'number' ? apiError.status : undefined;
  const detail = serverDetail(
    bodyMessage(apiError?.error) ?? apiError?.message ?? String(error),
    status,
  );
  if (context.isConnection || status === undefined) {
    const reason = rootCause(error);
    return new ProviderError(
      'network',
      `Cannot reach ${who} at ${context.baseUrl}: ${reason}. Check the network (or that the local ` +
        'model server is running) and the base URL in the chat settings.',
      { cause: error },
    );
  }
  if (status === 401 || status === 403) {
    return new ProviderError(
      'auth',
      `${capitalize(who)} refused the API key (${status}${detail}). Check the API key in the chat ` +
        'settings.',
      { status, cause: error },
    );
  }
  const retryAfterMs = retryAfter(apiError.headers);
  if (status === 429) {
    return new ProviderError('rate-limit', `${capitalize(who)} is rate-limiting requests (429)`, {
      status,
      cause: error,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status === 529 || status === 503) {
    return new ProviderError('overloaded', `${capitalize(who)} is overloaded (${status})`, {
      status,
      cause: error,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status === 404) {
    return new ProviderError(
      'bad-request',
      `${capitalize(who)} answered 404${detail}. Check the model name and the base URL in the ` +
        'chat settings.',
      { status, cause: error },
    );
  }
  if (status >= 400 && status < 500) {
    return new ProviderError(
      'bad-request',
      `${capitalize(who)} refused the request (${status}${detail})`,
      {
        status,
        cause: error,
      },
    );
  }
  return new ProviderError('server', `${capitalize(who)} failed (${status}${detail})`, {
    status,
    cause: error,
  });
}

/** The message in a provider's error body: Anthropic `{error: {message}}`, OpenAI `{message}`. */
function bodyMessage(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const record = body as { message?: unknown; error?: unknown };
  if (typeof record.message === 'string') return record.message;
  return bodyMessage(record.error);
}

/** The SDKs prefix messages with the status; keep only the server's own words, cut short. */
function serverDetail(message: string, status: number | undefined): string {
  let text = message.trim();
  if (status !== undefined && text.startsWith(String(status))) text = text.slice(3).trim();
  if (!text || text === 'status code (no body)') return '';
  return `: ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`;
}

function rootCause(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5; depth++) {
    const cause = (current as { cause?: unknown })?.cause;
    if (cause === undefined || cause === null) break;
    current = cause;
  }
  const code = (current as { code?: unknown })?.code;
  const message = current instanceof Error ? current.message : String(current);
  return typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
}

function retryAfter(headers: Headers | undefined): number | undefined {
  const value = headers?.get?.('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Parses a tool call's JSON arguments; anything but an object becomes `{}` plus the raw text. */
export function parseModelToolArguments(json: string): Record<string, unknown> {
  if (!json.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(json);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // fall through
  }
  return { _unparsedArguments: json };
}
