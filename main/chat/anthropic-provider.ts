// The Anthropic Messages API provider (official SDK, streaming): reads the raw SSE events
// (content_block_start/delta/stop with text_delta and input_json_delta, message_delta's
// stop_reason) into text deltas and complete tool calls. Tool results go back as `tool_result`
// blocks (`is_error` for failures) in a user turn. The SDK's own retries are off: the agent loop
// retries rate limits itself, with bounded backoff it reports to the UI.
import Anthropic, { APIConnectionError, APIUserAbortError } from '@anthropic-ai/sdk';
import type {
  MessageParam,
  RawMessageStreamEvent,
  ContentBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
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

export interface ProviderConfig {
  baseUrl: string;
  apiKey: string;
  /** Bound on connecting and each wait for data (ms). */
  timeoutMs?: number;
}

export class AnthropicProvider implements ChatProvider {
  readonly kind = 'anthropic' as const;
  readonly #client: Anthropic;
  readonly #baseUrl: string;

  constructor(config: ProviderConfig) {
    this.#baseUrl = config.baseUrl;
    this.#client = new Anthropic({
      apiKey: config.apiKey,
      baseURL: config.baseUrl,
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
      const stream = await this.#client.messages.create(
        {
          model: request.model,
          max_tokens: request.maxTokens,
          system: request.system,
          messages: toAnthropicMessages(request.messages),
          ...(request.tools.length === 0
            ? {}
            : {
                tools: request.tools.map((tool): Tool => ({
                  name: tool.name,
                  description: tool.description,
                  input_schema: tool.inputSchema as Tool['input_schema'],
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
  stream: AsyncIterable<RawMessageStreamEvent>,
  onEvent: (event: ModelStreamEvent) => void,
): Promise<ModelResponse> {
  let text = '';
  const toolCalls: ModelToolCall[] = [];
  const blocks = new Map<number, { id: string; name: string; json: string }>();
  let stopReason: ModelResponse['stopReason'] = 'other';
  for await (const event of stream) {
    switch (event.type) {
      case 'content_block_start':
        if (event.content_block.type === 'tool_use') {
          blocks.set(event.index, {
            id: event.content_block.id,
            name: event.content_block.name,
            json: '',
          });
        } else if (event.content_block.type === 'text' && event.content_block.text) {
          text += event.content_block.text;
          onEvent({ type: 'text', text: event.content_block.text });
        }
        break;
      case 'content_block_delta':
        if (event.delta.type === 'text_delta') {
          text += event.delta.text;
          onEvent({ type: 'text', text: event.delta.text });
        } else if (event.delta.type === 'input_json_delta') {
          const block = blocks.get(event.index);
          if (block) block.json += event.delta.partial_json;
        }
        break;
      case 'content_block_stop': {
        const block = blocks.get(event.index);
        if (block) {
          blocks.delete(event.index);
          const call = {
            id: block.id,
            name: block.name,
            arguments: parseModelToolArguments(block.json),
          };
          toolCalls.push(call);
          onEvent({ type: 'tool-call', call });
        }
        break;
      }
      case 'message_delta':
        stopReason = mapStopReason(event.delta.stop_reason);
        break;
      default:
        break;
    }
  }
  return { text, toolCalls, stopReason };
}

function mapStopReason(reason: string | null | undefined): ModelResponse['stopReason'] {
  if (reason === 'end_turn' || reason === 'stop_sequence') return 'end';
  if (reason === 'tool_use') return 'tool-use';
  if (reason === 'max_tokens') return 'max-tokens';
  return 'other';
}

/** Neutral history → Messages API turns; consecutive same-role turns are merged. */
export function toAnthropicMessages(messages: ModelMessage[]): MessageParam[] {
  const turns: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', content: ContentBlockParam[]) => {
    if (content.length === 0) return;
    const last = turns.at(-1);
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...content);
    else turns.push({ role, content });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      push('user', [{ type: 'text', text: message.text }]);
    } else if (message.role === 'assistant') {
      push('assistant', [
        ...(message.text ? [{ type: 'text' as const, text: message.text }] : []),
        ...message.toolCalls.map((call) => ({
          type: 'tool_use' as const,
          id: call.id,
          name: call.name,
          input: call.arguments,
        })),
      ]);
    } else {
      push(
        'user',
        message.results.map((result) => ({
          type: 'tool_result' as const,
          tool_use_id: result.callId,
          content: result.text,
          ...(result.isError ? { is_error: true } : {}),
        })),
      );
    }
  }
  return turns;
}
