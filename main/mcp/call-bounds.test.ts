// Flooding a worktree server: calls past the bound on one session end at once with an error naming
// the bound while the others run; past the bound of the whole server they wait for a slot, and past
// the waiting bound they end at once too; an SSE stream whose client stopped reading is cut once
// its unread output passes the cap. Every other client is served meanwhile.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { defineTool, readOnlyLocal } from '../tools/tool-definition.ts';
import {
  authHeader,
  connectClient,
  initializeBody,
  rawRequest,
  startTestListener,
  waitUntil,
  type Leg,
  type TestListener,
} from '../testing/mcp-clients.ts';
import { MAX_CALLS_PER_SESSION } from './server-factory.ts';
import { MAX_SSE_BACKLOG_BYTES } from './sse-transport.ts';

/** Calls of `gate` wait for this to open (or for their signal). */
let openGate: () => void = () => undefined;
let gate: Promise<void> = Promise.resolve();
let gateCalls = 0;
function closeGate(): void {
  gateCalls = 0;
  gate = new Promise((resolve) => (openGate = resolve));
}

const gateTool = defineTool({
  name: 'gate',
  title: 'Gate',
  description: 'Waits until the test opens the gate.',
  inputSchema: z.object({}),
  outputSchema: z.object({ done: z.boolean() }),
  annotations: readOnlyLocal,
  handler: async (_args, { signal }) => {
    gateCalls++;
    await Promise.race([
      gate,
      new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true })),
    ]);
    return { done: true };
  },
});

const quickTool = defineTool({
  name: 'quick',
  title: 'Quick',
  description: 'Answers at once.',
  inputSchema: z.object({}),
  outputSchema: z.object({ done: z.boolean() }),
  annotations: readOnlyLocal,
  handler: async () => ({ done: true }),
});

/** ~0.5 MiB of text: its answer is ~1 MiB (as text and as structuredContent). */
const HALF_MIB = 'x'.repeat(512 * 1024);
const bigTool = defineTool({
  name: 'big',
  title: 'Big',
  description: 'Answers half a MiB of text.',
  inputSchema: z.object({}),
  outputSchema: z.object({ text: z.string() }),
  annotations: readOnlyLocal,
  handler: async () => ({ text: HALF_MIB }),
});

const tools = [gateTool, quickTool, bigTool];

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  openGate();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(): Promise<TestListener> {
  const server = await startTestListener({ tools });
  cleanups.push(() => server.close());
  return server;
}

async function connect(server: TestListener, leg: Leg) {
  const connection = await connectClient(server.port, leg);
  cleanups.push(() => connection.client.close().catch(() => undefined));
  return connection.client;
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

describe('calls running at once', () => {
  it.each<Leg>(['sse', 'legacy-http'])(
    'past the bound of one %s session end at once with an error naming it; others are served',
    async (leg) => {
      closeGate();
      const server = await listen();
      const flooder = await connect(server, leg);
      const other = await connect(server, 'modern-http');
      const extra = 4;
      const settled: CallToolResult[] = [];
      const calls = Array.from({ length: MAX_CALLS_PER_SESSION + extra }, () =>
        flooder.callTool({ name: 'gate', arguments: {} }).then((result) => {
          settled.push(result as CallToolResult);
          return result as CallToolResult;
        }),
      );
      await waitUntil(
        () => settled.length === extra && gateCalls === MAX_CALLS_PER_SESSION,
        5_000,
        'the session full',
      );
      for (const refused of settled) {
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toBe(
          `too many calls running at once (${MAX_CALLS_PER_SESSION}) on this MCP session; ` +
            'wait for some to finish, then try again',
        );
      }
      // Another client is served while the session is full, and so is a session's refusal logged.
      expect((await other.callTool({ name: 'quick', arguments: {} })).isError).not.toBe(true);
      expect(
        server.events.filter((event) => event.type === 'tool-called' && event.isError),
      ).toHaveLength(extra);
      openGate();
      const results = await Promise.all(calls);
      expect(results.filter((result) => result.isError !== true)).toHaveLength(
        MAX_CALLS_PER_SESSION,
      );
      // Once its calls finished, the session may call again.
      expect((await flooder.callTool({ name: 'quick', arguments: {} })).isError).not.toBe(true);
    },
  );

  it('past the bound of the whole server wait for a slot, oldest first; past the waiting bound they end at once', async () => {
    closeGate();
    const bounds = { maxCallsRunning: 6, maxCallsWaiting: 4 };
    const server = await startTestListener({ tools, callBounds: bounds });
    cleanups.push(() => server.close());
    const clients = await Promise.all(
      Array.from({ length: 3 }, (_, index) =>
        connect(server, index % 2 === 0 ? 'sse' : 'legacy-http'),
      ),
    );
    const modern = await connect(server, 'modern-http');
    const settled: CallToolResult[] = [];
    const call = (client: (typeof clients)[number], name: string) =>
      client.callTool({ name, arguments: {} }).then((result) => {
        settled.push(result as CallToolResult);
        return result as CallToolResult;
      });
    // 6 run, 4 wait (3 sessions, 3-4 calls each: under the session bound).
    const running = clients.flatMap((client) => [0, 1].map(() => call(client, 'gate')));
    await waitUntil(() => gateCalls === bounds.maxCallsRunning, 5_000, 'the slots taken');
    const waiting = [
      call(clients[0]!, 'quick'),
      call(clients[1]!, 'quick'),
      call(clients[2]!, 'quick'),
    ];
    const modernWaiting = modern.callTool({ name: 'quick', arguments: {} });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toEqual([]); // waiting, not refused
    // The queue is full: the next call, on any leg, ends at once with the bound in its error.
    const refused = (await call(clients[2]!, 'quick')) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe(
      'too many calls running (6) and waiting (4) on this worktree server; wait for some to ' +
        'finish, then try again',
    );
    expect(gateCalls).toBe(bounds.maxCallsRunning);
    openGate();
    const results = await Promise.all([...running, ...waiting, modernWaiting]);
    expect(results.filter((result) => result.isError === true)).toEqual([]);
    // Free again: a call runs at once.
    expect((await modern.callTool({ name: 'quick', arguments: {} })).isError).not.toBe(true);
  });
});

/** A raw SSE session whose stream the test can stop reading. */
async function openRawSse(port: number) {
  let closed = false;
  let received = 0;
  const { response, endpoint } = await new Promise<{
    response: http.IncomingMessage;
    endpoint: string;
  }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/sse', headers: authHeader, agent: false }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          text += chunk.toString();
          const match = /data: (\/messages\?sessionId=[^\n]+)/.exec(text);
          if (match?.[1]) resolve({ response: res, endpoint: match[1] });
        });
        res.on('close', () => (closed = true));
        res.on('error', () => (closed = true));
      })
      .on('error', reject);
  });
  cleanups.push(() => response.destroy());
  const post = async (body: unknown): Promise<number> =>
    (
      await rawRequest({
        port,
        method: 'POST',
        path: endpoint,
        headers: { ...authHeader, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).status;
  return {
    response,
    post,
    isClosed: () => closed,
    received: () => received,
    /** Stops reading: nothing more is taken from the socket. */
    stopReading: () => {
      response.pause();
      response.socket.pause();
    },
    /** Reads again: what the socket still holds, then the end the server sent. */
    startReading: () => {
      response.socket.resume();
      response.resume();
    },
  };
}

describe('an SSE stream whose client stopped reading', () => {
  it('is cut once its unread output passes the cap; other clients are served', async () => {
    const server = await listen();
    const other = await connect(server, 'sse');
    const stalled = await openRawSse(server.port);
    expect(await stalled.post(initializeBody(0))).toBe(202);
    await waitUntil(() => stalled.received() > 200, 5_000, 'the initialize answer');
    expect(await stalled.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(202);
    stalled.stopReading();
    // Batches of big answers until the session is gone (each ~1 MiB on the stream).
    let id = 1;
    let status = 202;
    const most = (3 * MAX_SSE_BACKLOG_BYTES) / (1024 * 1024);
    while (status === 202 && id < most) {
      const batch = Array.from({ length: 8 }, () => ({
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: { name: 'big', arguments: {} },
      }));
      status = await stalled.post(batch);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(404); // the session ended...
    stalled.startReading();
    await waitUntil(() => stalled.isClosed(), 5_000, 'the stream cut'); // ...and its stream too
    const answer = (await other.callTool({ name: 'big', arguments: {} })) as CallToolResult;
    expect(answer.structuredContent).toEqual({ text: HALF_MIB });
  });
});
