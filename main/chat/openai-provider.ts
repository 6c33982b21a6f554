// The OpenAI-compatible chat completions provider (official `openai` SDK, streaming) for OpenAI,
// Ollama, LM Studio, vLLM and the like (base URL configurable): reads `choices[0].delta` chunks
// (content, and tool_calls assembled by index from their argument fragments) until `[DONE]`.
// Tool results go back as `role: "tool"` messages; the API has no error flag, so a failed call's
// text starts with "Error:". SDK retries are off: the agent loop does bounded backoff itself.
import OpenAI, { APIConnectionError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ProviderConfig } from './anthropic-provider.ts';
import {
  classifyProviderError,
  ProviderError,
  parseModelToolArguments,
  type ChatProvider,
  type ModelMessage,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
  type ModelToolCall,
} from './provider.ts';

export class OpenAiProvider implements ChatProvider {
  readonly kind = 'openai' as const;
  readonly #client: OpenAI;
  readonly #baseUrl: string;

  constructor(config: Omit<ProviderConfig, 'apiKey'> & { apiKey: string | undefined }) {
    this.#baseUrl = config.baseUrl;
    this.#client = new OpenAI({
      // Local servers (Ollama, LM Studio, vLLM) need no key, but the SDK wants one.
      apiKey: config.apiKey ?? 'no-key',
      baseURL: config.baseUrl,
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: config.timeoutMs ?? 120_000,
    });
  }

  async stream(
    request: ModelRequest,
    signal: AbortSignal,
    onEvent: (event: ModelStreamEvent) => void,
  ): Promise<ModelResponse> {
    try {
      const stream = await this.#client.chat.completions.create(
        {
          model: request.model,
          // No max_tokens: OpenAI's newer models refuse it and compatible servers differ on
          // max_completion_tokens; each server's default applies.
          messages: [
            { role: 'system', content: request.system },
            ...toOpenAiMessages(request.messages),
          ],
          ...(request.tools.length === 0
            ? {}
            : {
                tools: request.tools.map((tool): ChatCompletionTool => ({
                  type: 'function',
                  function: {
                    name: tool.name,
                    description: tool.description,
                    parameters: tool.inputSchema,
                  },
                })),
              }),
          stream: true,
        },
        { signal },
      );
      const response = await readStream(stream, onEvent);
      // An aborted SDK stream may just end: partial output is not an answer.
      if (signal.aborted) throw new ProviderError('aborted', 'stopped');
      return response;
    } catch (error) {
      throw classifyProviderError(error, {
        kind: this.kind,
        baseUrl: this.#baseUrl,
        signal,
        isAbort: error instanceof APIUserAbortError,
        isConnection: error instanceof APIConnectionError,
      });
    }
  }
}

async function readStream(
  stream: AsyncIterable<ChatCompletionChunk>,
  onEvent: (event: ModelStreamEvent) => void,
): Promise<ModelResponse> {
  let text = '';
  const pending = new Map<number, { id: string; name: string; json: string }>();
  let finish: string | null = null;
  for await (const chunk of stream) {
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content) {
      text += delta.content;
      onEvent({ type: 'text', text: delta.content });
    }
    for (const fragment of delta.tool_calls ?? []) {
      const index = fragment.index ?? 0;
      const call = pending.get(index) ?? { id: '', name: '', json: '' };
      if (fragment.id) call.id = fragment.id;
      if (fragment.function?.name) call.name += fragment.function.name;
      if (fragment.function?.arguments) call.json += fragment.function.arguments;
      pending.set(index, call);
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  const toolCalls: ModelToolCall[] = [...pending.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, call]) => ({
      id: call.id || `call_${index}`,
      name: call.name,
      arguments: parseModelToolArguments(call.json),
    }));
  for (const call of toolCalls) onEvent({ type: 'tool-call', call });
  const stopReason: ModelResponse['stopReason'] =
    finish === 'tool_calls' || (finish === null && toolCalls.length > 0)
      ? 'tool-use'
      : finish === 'stop'
        ? 'end'
        : finish === 'length'
          ? 'max-tokens'
          : toolCalls.length > 0
            ? 'tool-use'
            : 'other';
  return { text, toolCalls, stopReason };
}

/** Neutral history → chat completions messages (without the system message). */
export function toOpenAiMessages(messages: ModelMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      out.push({ role: 'user', content: message.text });
    } else if (message.role === 'assistant') {
      out.push({
        role: 'assistant',
        content: message.text || null,
        ...(message.toolCalls.length === 0
          ? {}
          : {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            }),
      });
    } else {
      for (const result of message.results) {
        out.push({
          role: 'tool',
          tool_call_id: result.callId,
          content: result.isError ? `Error: ${result.text}` : result.text,
        });
      }
    }
  }
  return out;
}
