// The agent loop of one run (the model answering one user message): offer the worktree server's
// tools to the model, stream its answer, run the tool calls it asks for through the MCP client,
// feed the results back, and repeat until a final answer or the step limit. Each model response is
// one stored assistant message. Rate limits are retried with bounded backoff; Stop (the signal)
// cancels the model stream or the running tool call and leaves the conversation consistent:
// partial text kept and marked `stopped`, every tool call the model asked for given a result.
import type {
  ChatEvent,
  ChatMessage,
  ChatPart,
  ChatRunOutcome,
  ChatToolCallPart,
} from '../../shared/chat.ts';
import type { ChatMcpClient } from './chat-mcp-client.ts';
import { settleParts, STOPPED_RESULT_TEXT, type ConversationStore } from './conversation-store.ts';
import {
  ProviderError,
  type ChatProvider,
  type ModelMessage,
  type ModelTool,
  type ModelToolCall,
} from './provider.ts';

export interface RetryPolicy {
  /** Retries after the first attempt (default 3). */
  maxRetries: number;
  /** First backoff delay; doubles each retry (default 1000 ms). */
  baseMs: number;
  /** Cap of one delay, Retry-After included (default 30 s). */
  maxMs: number;
}

export interface AgentRun {
  worktreeId: string;
  conversationId: string;
  store: ConversationStore;
  mcp: ChatMcpClient;
  provider: ChatProvider;
  model: string;
  system: string;
  maxTokens: number;
  maxSteps: number;
  retry: RetryPolicy;
  signal: AbortSignal;
  emit: (event: ChatEvent) => void;
}

export interface RunResult {
  outcome: ChatRunOutcome;
  error: string | null;
}

export async function runAgent(run: AgentRun): Promise<RunResult> {
  let tools: ModelTool[];
  try {
    tools = await run.mcp.listTools(run.worktreeId, run.signal);
  } catch (error) {
    if (run.signal.aborted) return { outcome: 'stopped', error: null };
    return failRun(run, `Cannot list the worktree server's tools: ${messageOf(error)}`);
  }
  for (let step = 1; step <= run.maxSteps; step++) {
    const history = toModelMessages(run.store.listMessages(run.conversationId));
    const message = run.store.addMessage(run.conversationId, {
      role: 'assistant',
      status: 'streaming',
      parts: [],
      error: null,
    });
    run.emit({ kind: 'message-added', message });
    const result = await streamStep(run, message, history, tools);
    if (result) return result;
    if (!message.parts.some((part) => part.type === 'tool-call')) {
      return finish(run, message, 'complete', null, { outcome: 'complete', error: null });
    }
    const stopped = await runToolCalls(run, message);
    if (stopped) return stopped;
    finishMessage(run, message, 'complete', null);
  }
  return {
    outcome: 'step-limit',
    error: `The model was still calling tools after ${run.maxSteps} steps, so Grove stopped it. Send a message to let it go on.`,
  };
}

/** Streams one model response into `message`; returns a RunResult if the run ends here. */
async function streamStep(
  run: AgentRun,
  message: ChatMessage,
  history: ModelMessage[],
  tools: ModelTool[],
): Promise<RunResult | undefined> {
  let text = '';
  let calls: ModelToolCall[];
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await run.provider.stream(
        {
          model: run.model,
          system: run.system,
          messages: history,
          tools,
          maxTokens: run.maxTokens,
        },
        run.signal,
        (event) => {
          if (event.type === 'text') {
            text += event.text;
            run.emit({ kind: 'text-delta', messageId: message.id, text: event.text });
          }
        },
      );
      text = response.text;
      calls = response.toolCalls;
      break;
    } catch (caught) {
      const error =
        caught instanceof ProviderError ? caught : new ProviderError('server', messageOf(caught));
      message.parts = text ? [{ type: 'text', text }] : [];
      if (error.kind === 'aborted' || run.signal.aborted) {
        return finish(run, message, 'stopped', null, { outcome: 'stopped', error: null });
      }
      if (error.retryable && text === '' && attempt < run.retry.maxRetries) {
        const delayMs = Math.min(
          run.retry.maxMs,
          error.retryAfterMs ?? run.retry.baseMs * 2 ** attempt,
        );
        run.emit({ kind: 'retrying', attempt: attempt + 1, delayMs, reason: error.message });
        if (await sleep(delayMs, run.signal)) continue;
        return finish(run, message, 'stopped', null, { outcome: 'stopped', error: null });
      }
      const final = error.retryable
        ? `${error.message}; gave up after ${attempt + 1} attempts. Try again later.`
        : error.message;
      return finish(run, message, 'error', final, { outcome: 'error', error: final });
    }
  }
  const parts: ChatPart[] = text ? [{ type: 'text', text }] : [];
  for (const call of calls) {
    parts.push({
      type: 'tool-call',
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
      status: 'running',
      result: null,
    });
  }
  message.parts = parts;
  run.store.updateMessage(message);
  return undefined;
}

/** Runs the message's tool calls in order; returns a RunResult if Stop cut them short. */
async function runToolCalls(run: AgentRun, message: ChatMessage): Promise<RunResult | undefined> {
  for (const part of message.parts) {
    if (part.type !== 'tool-call') continue;
    if (run.signal.aborted) break;
    run.emit({
      kind: 'tool-call-started',
      messageId: message.id,
      callId: part.callId,
      name: part.name,
      arguments: part.arguments,
    });
    try {
      const result = await run.mcp.callTool(run.worktreeId, part.name, part.arguments, run.signal);
      setToolResult(part, result.isError ? 'error' : 'done', result);
    } catch (error) {
      if (!run.signal.aborted) {
        setToolResult(part, 'error', { isError: true, text: messageOf(error), durationMs: 0 });
      } else {
        setToolResult(part, 'stopped', { isError: true, text: STOPPED_RESULT_TEXT, durationMs: 0 });
      }
    }
    run.emit({
      kind: 'tool-call-finished',
      messageId: message.id,
      callId: part.callId,
      status: part.status as 'done' | 'error' | 'stopped',
      result: part.result!,
    });
    run.store.updateMessage(message);
  }
  if (!run.signal.aborted) return undefined;
  return finish(run, message, 'stopped', null, { outcome: 'stopped', error: null });
}

function setToolResult(
  part: ChatToolCallPart,
  status: ChatToolCallPart['status'],
  result: NonNullable<ChatToolCallPart['result']>,
): void {
  part.status = status;
  part.result = result;
}

function finishMessage(
  run: AgentRun,
  message: ChatMessage,
  status: ChatMessage['status'],
  error: string | null,
): void {
  message.status = status;
  message.error = error;
  message.parts = settleParts(message.parts);
  run.store.updateMessage(message);
  run.emit({ kind: 'message-finished', message: { ...message, parts: [...message.parts] } });
}

function finish(
  run: AgentRun,
  message: ChatMessage,
  status: ChatMessage['status'],
  error: string | null,
  result: RunResult,
): RunResult {
  finishMessage(run, message, status, error);
  return result;
}

/** An error before any model output: stored as an assistant message so it shows and persists. */
function failRun(run: AgentRun, error: string): RunResult {
  const message = run.store.addMessage(run.conversationId, {
    role: 'assistant',
    status: 'error',
    parts: [],
    error,
  });
  run.emit({ kind: 'message-added', message });
  run.emit({ kind: 'message-finished', message });
  return { outcome: 'error', error };
}

/**
 * Stored messages → the provider-neutral history. Streaming messages (the one being written) and
 * assistant messages with nothing in them are left out; every tool call carries a result.
 */
export function toModelMessages(messages: ChatMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      const text = textOf(message.parts);
      if (text) out.push({ role: 'user', text });
      continue;
    }
    if (message.status === 'streaming') continue;
    const text = textOf(message.parts);
    const calls = settleParts(message.parts).filter(
      (part): part is ChatToolCallPart => part.type === 'tool-call',
    );
    if (!text && calls.length === 0) continue;
    out.push({
      role: 'assistant',
      text,
      toolCalls: calls.map((call) => ({
        id: call.callId,
        name: call.name,
        arguments: call.arguments,
      })),
    });
    if (calls.length > 0) {
      out.push({
        role: 'tool-results',
        results: calls.map((call) => ({
          callId: call.callId,
          name: call.name,
          text: call.result!.text,
          isError: call.result!.isError,
        })),
      });
    }
  }
  return out;
}

function textOf(parts: ChatPart[]): string {
  return parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
}

/** Resolves true after `ms`, false at once if `signal` aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
