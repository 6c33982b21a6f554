// MCP logging with the real SDK client: server log messages (McpListener.log) reach legacy
// sessions at or above the level they chose with logging/setLevel, and a tool's own log messages
// (ToolContext.log) follow the session's level on legacy legs and the request's `_meta` level on
// the modern leg.
import { describe, expect, it } from 'vitest';
import { LOG_LEVEL_META_KEY } from '@modelcontextprotocol/client';
import type { Client, LoggingMessageNotification } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { defineTool, readOnlyLocal } from '../tools/tool-definition.ts';
import { connectClient, startTestListener, waitUntil } from '../testing/mcp-clients.ts';
import type { Leg, TestListener } from '../testing/mcp-clients.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const chattyTool = defineTool({
  name: 'chatty',
  title: 'Chatty',
  description: 'Logs one message at each of four levels, then answers.',
  inputSchema: z.object({}),
  outputSchema: z.object({ done: z.boolean() }),
  annotations: readOnlyLocal,
  handler: async (_args, { log }) => {
    log?.('debug', 'tool debug');
    log?.('info', 'tool info');
    log?.('warning', 'tool warning', { files: 3 });
    log?.('error', 'tool error');
    return { done: true };
  },
});

const cleanups = cleanupsAfterEach();

interface Received {
  level: string;
  data: unknown;
  logger?: string;
}

async function connect(
  leg: Leg,
): Promise<{ server: TestListener; client: Client; got: Received[] }> {
  const server = await startTestListener({ tools: [chattyTool] });
  cleanups.push(() => server.close());
  const { client } = await connectClient(server.port, leg);
  cleanups.push(() => client.close());
  const got: Received[] = [];
  client.setNotificationHandler('notifications/message', (note: LoggingMessageNotification) => {
    got.push(note.params as Received);
  });
  return { server, client, got };
}

const messages = (got: Received[]): unknown[] =>
  got.map((entry) =>
    typeof entry.data === 'string' ? entry.data : (entry.data as { message: string }).message,
  );

/** Broadcasts `levels`, then an emergency sentinel, and waits for the sentinel. */
async function broadcast(server: TestListener, got: Received[], ...levels: Received['level'][]) {
  const sentinel = `sentinel-${Math.random()}`;
  for (const level of levels) server.listener.log(level as never, `server ${level}`);
  server.listener.log('emergency', sentinel);
  await waitUntil(() => messages(got).includes(sentinel), 5_000, 'the sentinel log message');
  const seen = messages(got).filter((message) => message !== sentinel && message !== 'hello');
  got.length = 0;
  return seen;
}

describe.each<Leg>(['legacy-http', 'sse'])('logging over %s', (leg) => {
  it('logging/setLevel changes which server log messages the client receives', async () => {
    const { server, client, got } = await connect(leg);
    // Messages outside a request need the session's standing stream (Streamable HTTP opens it with
    // a GET after initializing): say hello until it arrives.
    await waitUntil(
      () => {
        server.listener.log('emergency', 'hello');
        return messages(got).includes('hello');
      },
      5_000,
      'the standing stream',
    );
    got.length = 0;
    // Before any setLevel, the server sends every level.
    expect(await broadcast(server, got, 'debug', 'warning')).toEqual([
      'server debug',
      'server warning',
    ]);

    await client.setLoggingLevel('warning');
    expect(await broadcast(server, got, 'debug', 'info', 'warning', 'error')).toEqual([
      'server warning',
      'server error',
    ]);
    expect(got).toEqual([]);

    await client.setLoggingLevel('error');
    expect(await broadcast(server, got, 'info', 'warning', 'error', 'critical')).toEqual([
      'server error',
      'server critical',
    ]);

    await client.setLoggingLevel('debug');
    expect(await broadcast(server, got, 'debug')).toEqual(['server debug']);
  });

  it("a tool's log messages follow the session's level", async () => {
    const { client, got } = await connect(leg);
    await client.setLoggingLevel('warning');
    const result = await client.callTool({ name: 'chatty', arguments: {} });
    expect(result.isError).toBeFalsy();
    await waitUntil(() => got.length >= 2, 5_000, 'two tool log messages');
    expect(got).toEqual([
      { level: 'warning', logger: 'chatty', data: { message: 'tool warning', files: 3 } },
      { level: 'error', logger: 'chatty', data: 'tool error' },
    ]);
  });
});

describe('logging over modern-http', () => {
  it("a tool's log messages follow the request's _meta level, none without one", async () => {
    const { client, got } = await connect('modern-http');
    await client.callTool({ name: 'chatty', arguments: {} });
    await client.callTool({
      name: 'chatty',
      arguments: {},
      _meta: { [LOG_LEVEL_META_KEY]: 'error' },
    });
    await waitUntil(() => got.length >= 1, 5_000, 'a tool log message');
    expect(messages(got)).toEqual(['tool error']);
    got.length = 0;
    await client.callTool({
      name: 'chatty',
      arguments: {},
      _meta: { [LOG_LEVEL_META_KEY]: 'info' },
    });
    await waitUntil(() => got.length >= 3, 5_000, 'three tool log messages');
    expect(messages(got)).toEqual(['tool info', 'tool warning', 'tool error']);
  });
});
