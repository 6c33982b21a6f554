// Test support: a scripted fake LLM provider on 127.0.0.1:0 (node:http) speaking a real wire
// format — Anthropic Messages SSE (message_start, content_block_start/delta/stop with text_delta
// and input_json_delta, message_delta with stop_reason, message_stop) or OpenAI chat completions
// chunks (`data: {choices:[{delta}]}` then `data: [DONE]`). Each request takes the next scripted
// reply and is recorded (path, headers, JSON body). Used by tests only.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatProviderKind } from '../../shared/chat.ts';

export type FakeReply =
  /** A final answer, streamed in these chunks. */
  | { kind: 'text'; chunks: string[] }
  /** Optional text, then tool calls (arguments streamed in two fragments each). */
  | { kind: 'tool-calls'; text?: string; calls: { id: string; name: string; arguments: object }[] }
  /** An HTTP error with the provider's error body. */
  | { kind: 'status'; status: number; message: string; headers?: Record<string, string> }
  /** Streams these text chunks, then holds the response open until the client goes away. */
  | { kind: 'hang'; chunks: string[] };

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface FakeProvider {
  /** The base URL to configure (OpenAI's includes `/v1`, as real OpenAI-compatible servers do). */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Requests whose client disconnected before the reply ended. */
  disconnects: number;
  /** Replies still to be served. */
  script: FakeReply[];
  close(): Promise<void>;
}

export async function startFakeProvider(
  format: ChatProviderKind,
  script: FakeReply[],
): Promise<FakeProvider> {
  const fake = {
    baseUrl: '',
    requests: [] as RecordedRequest[],
    disconnects: 0,
    script: [...script],
    close: async () => {},
  };
  const expectedPath = format === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        // recorded as {}
      }
      fake.requests.push({ path: request.url ?? '', headers: request.headers, body });
      if (request.method !== 'POST' || request.url !== expectedPath) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: `no route ${request.url}` } }));
        return;
      }
      const reply = fake.script.shift() ?? { kind: 'status', status: 500, message: 'script empty' };
      response.on('close', () => {
        if (!response.writableFinished) fake.disconnects++;
      });
      serve(format, reply, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.baseUrl =
    format === 'anthropic' ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

function serve(format: ChatProviderKind, reply: FakeReply, response: ServerResponse): void {
  if (reply.kind === 'status') {
    response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    response.end(JSON.stringify(errorBody(format, reply.status, reply.message)));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const events = format === 'anthropic' ? anthropicEvents(reply) : openAiEvents(reply);
  for (const event of events) response.write(event);
  if (reply.kind !== 'hang') response.end();
}

function errorBody(format: ChatProviderKind, status: number, message: string): object {
  if (format === 'anthropic') {
    const type =
      status === 401
        ? 'authentication_error'
        : status === 429
          ? 'rate_limit_error'
          : 'invalid_request_error';
    return { type: 'error', error: { type, message } };
  }
  return {
    error: {
      message,
      type: 'invalid_request_error',
      code: status === 401 ? 'invalid_api_key' : null,
    },
  };
}

function sse(event: string, data: object): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function anthropicEvents(reply: Exclude<FakeReply, { kind: 'status' }>): string[] {
  const events = [
    sse('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'fake-model',
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 0 },
      },
    }),
  ];
  let index = 0;
  const chunks = reply.kind === 'tool-calls' ? (reply.text ? [reply.text] : []) : reply.chunks;
  if (chunks.length > 0) {
    events.push(
      sse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      }),
    );
    for (const text of chunks) {
      events.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text },
        }),
      );
    }
    if (reply.kind === 'hang') return events;
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  const calls = reply.kind === 'tool-calls' ? reply.calls : [];
  for (const call of calls) {
    events.push(
      sse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
    );
    for (const partial_json of halves(JSON.stringify(call.arguments))) {
      events.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json },
        }),
      );
    }
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  events.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: 5 },
    }),
    sse('message_stop', { type: 'message_stop' }),
  );
  return events;
}

function openAiEvents(reply: Exclude<FakeReply, { kind: 'status' }>): string[] {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'fake-model',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '' })];
  const texts = reply.kind === 'tool-calls' ? (reply.text ? [reply.text] : []) : reply.chunks;
  for (const content of texts) events.push(chunk({ content }));
  if (reply.kind === 'hang') return events;
  const calls = reply.kind === 'tool-calls' ? reply.calls : [];
  calls.forEach((call, index) => {
    const [first, second] = halves(JSON.stringify(call.arguments));
    events.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: first } },
        ],
      }),
      chunk({ tool_calls: [{ index, function: { arguments: second } }] }),
    );
  });
  events.push(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'), 'data: [DONE]\n\n');
  return events;
}

function halves(text: string): [string, string] {
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}
