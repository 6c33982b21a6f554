// Test fixtures for the MCP listener tests: small tools (echo, fail, crash), a listener started on
// 127.0.0.1:0 that records its events, raw HTTP requests with arbitrary headers (Host included),
// SDK clients for each leg, and bounded waiting helpers. Never used by production code.
import http from 'node:http';
import { z } from 'zod';
import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { UserError } from '../platform/errors.ts';
import { defineTool, readOnlyLocal } from '../tools/tool-definition.ts';
import type { ServerParts, ToolDefinition } from '../tools/tool-definition.ts';
import type { McpClientEvent } from '../mcp/client-events.ts';
import { createMcpListener } from '../mcp/mcp-listener.ts';
import type { McpListener, McpListenerOptions } from '../mcp/mcp-listener.ts';

export const TEST_TOKEN = 'test-token-0123456789abcdef';

export const echoTool = defineTool({
  name: 'echo',
  title: 'Echo',
  description: 'Returns its message, with a few fields to check key ordering.',
  inputSchema: z.object({ message: z.string() }),
  outputSchema: z.object({
    zeta: z.string(),
    alpha: z.number(),
    nested: z.object({ b: z.boolean(), a: z.array(z.string()) }),
    root: z.string(),
  }),
  annotations: readOnlyLocal,
  handler: async ({ message }, { root }) => ({
    zeta: message,
    alpha: message.length,
    nested: { b: true, a: [message] },
    root,
  }),
});

export const failTool = defineTool({
  name: 'fail',
  title: 'Fail',
  description: 'Always refuses with a UserError.',
  inputSchema: z.object({}),
  outputSchema: z.object({ never: z.string() }),
  annotations: readOnlyLocal,
  handler: async () => {
    throw new UserError('path escapes the worktree: ../x');
  },
});

export const crashTool = defineTool({
  name: 'crash',
  title: 'Crash',
  description: 'Throws an unexpected error.',
  inputSchema: z.object({}),
  outputSchema: z.object({ never: z.string() }),
  annotations: { ...readOnlyLocal, idempotentHint: false },
  handler: async () => {
    throw new TypeError('boom');
  },
});

/** Signals seen by `wait` calls: true once the call was cancelled. */
export const waitCalls: { aborted: boolean }[] = [];

export const waitTool = defineTool({
  name: 'wait',
  title: 'Wait',
  description: 'Waits until cancelled (at most 10 s).',
  inputSchema: z.object({}),
  outputSchema: z.object({ aborted: z.boolean() }),
  annotations: readOnlyLocal,
  handler: async (_args, { signal }) => {
    const call = { aborted: false };
    waitCalls.push(call);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        call.aborted = true;
        resolve();
      });
    });
    return { aborted: call.aborted };
  },
});

export const testTools: ToolDefinition[] = [echoTool, failTool, crashTool, waitTool];

/** What `echo` returns for `message`, serialized with sorted keys. */
export function expectedEchoText(message: string, root: string): string {
  return JSON.stringify({
    alpha: message.length,
    nested: { a: [message], b: true },
    root,
    zeta: message,
  });
}

export interface TestListener {
  listener: McpListener;
  port: number;
  events: McpClientEvent[];
  errors: Error[];
  close(): Promise<void>;
}

/**
 * A listener on a free port with the test tools. `tools` and `extendServer` stand for
 * `loadServerParts` (which a listener calls on its first MCP request), for tests that have them
 * at hand.
 */
export async function startTestListener(
  overrides: Partial<McpListenerOptions> & Partial<ServerParts> = {},
): Promise<TestListener> {
  const events: McpClientEvent[] = [];
  const errors: Error[] = [];
  const { tools = testTools, extendServer, ...listenerOptions } = overrides;
  const listener = await createMcpListener({
    root: '/tmp/grove-test-root',
    token: TEST_TOKEN,
    port: 0,
    loadServerParts: async () => ({ tools, ...(extendServer ? { extendServer } : {}) }),
    serverInfo: { name: 'grove-test-server', version: '9.9.9' },
    onClientEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
    ...listenerOptions,
  });
  return { listener, port: listener.port, events, errors, close: () => listener.close() };
}

export type Leg = 'legacy-http' | 'modern-http' | 'sse';

export const CLIENT_INFO = { name: 'grove-test-client', version: '1.2.3' };

/** Connects an SDK v2 client over one leg (Bearer token in a header). */
export async function connectClient(
  port: number,
  leg: Leg,
  token = TEST_TOKEN,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport | SSEClientTransport }> {
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  const client = new Client(
    CLIENT_INFO,
    leg === 'modern-http' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const transport =
    leg === 'sse'
      ? new SSEClientTransport(new URL(`http://127.0.0.1:${port}/sse`), { requestInit })
      : new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
          requestInit,
        });
  await withTimeout(client.connect(transport), 10_000, `connect over ${leg}`);
  return { client, transport };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The whole body, or for an event stream the first chunk(s) up to `until`. */
  body: string;
}

export interface RawRequestOptions {
  port: number;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** For event streams: resolve once the received text satisfies this (default: any data). */
  until?: (text: string) => boolean;
  timeoutMs?: number;
}

/** A plain node:http request (any headers, including Host); event streams are cut short. */
export function rawRequest(options: RawRequestOptions): Promise<RawResponse> {
  const { port, method = 'GET', path, headers = {}, body, timeoutMs = 5_000 } = options;
  const until = options.until ?? ((text: string) => text.length > 0);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method, path, headers, agent: false },
      (response) => {
        let text = '';
        const isStream = String(response.headers['content-type'] ?? '').startsWith(
          'text/event-stream',
        );
        const finish = (): void => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text });
          request.destroy();
        };
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          if (isStream && until(text)) finish();
        });
        response.on('end', finish);
        response.on('error', () => finish());
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(body);
  });
}

/** An open SSE stream read incrementally. */
export interface SseStream {
  status: number;
  /** Resolves with all text received so far once it satisfies `predicate`. */
  waitFor(predicate: (text: string) => boolean, timeoutMs?: number): Promise<string>;
  close(): void;
}

export function openSseStream(
  port: number,
  path = '/sse',
  headers: Record<string, string> = { Authorization: `Bearer ${TEST_TOKEN}` },
): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, path, headers, agent: false },
      (response) => {
        let text = '';
        const waiters = new Set<() => void>();
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          for (const wake of waiters) wake();
        });
        resolve({
          status: response.statusCode ?? 0,
          waitFor: (predicate, timeoutMs = 5_000) =>
            new Promise((done, fail) => {
              const check = (): void => {
                if (!predicate(text)) return;
                waiters.delete(check);
                clearTimeout(timer);
                done(text);
              };
              const timer = setTimeout(() => {
                waiters.delete(check);
                fail(new Error(`SSE stream: condition not met in ${timeoutMs} ms; got ${text}`));
              }, timeoutMs);
              waiters.add(check);
              check();
            }),
          close: () => request.destroy(),
        });
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/** Rejects if `promise` does not settle within `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${label}: timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `condition` every 20 ms for at most `ms`. */
export async function waitUntil(
  condition: () => boolean,
  ms: number,
  label: string,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${label}: not reached within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const authHeader = { Authorization: `Bearer ${TEST_TOKEN}` };

/** A legacy `initialize` request body. */
export function initializeBody(id: number | string = 1): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: CLIENT_INFO },
  };
}
