// createMcpListener end to end: the v2 SDK client over each leg (legacy /mcp, modern /mcp, /sse),
// client events, session reaping and eviction, listening and closing.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { readOnlyLocal } from '../tools/tool-definition.ts';
import { createMcpListener } from './mcp-listener.ts';
import { newChallenge, proofMatches } from '../platform/http/healthz-proof.ts';
import {
  authHeader,
  CLIENT_INFO,
  connectClient,
  expectedEchoText,
  initializeBody,
  rawRequest,
  startTestListener,
  TEST_TOKEN,
  testTools,
  waitCalls,
  waitUntil,
  withTimeout,
} from '../testing/mcp-clients.ts';
import type { Leg, TestListener } from '../testing/mcp-clients.ts';
import { stableStringify } from './stable-json.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

async function listen(overrides: Parameters<typeof startTestListener>[0] = {}) {
  const server = await startTestListener(overrides);
  cleanups.push(() => server.close());
  return server;
}

async function connect(server: TestListener, leg: Leg) {
  const connection = await connectClient(server.port, leg);
  cleanups.push(() => connection.client.close());
  return connection;
}

function sessionIdOf(transport: object): string | undefined {
  return 'sessionId' in transport && typeof transport.sessionId === 'string'
    ? transport.sessionId
    : undefined;
}

const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

interface ModernRequest {
  name: string;
  version?: string;
  method?: string;
  /** null: a notification. */
  id?: number | null;
  /** Added to (undefined: removed from) the valid envelope. */
  meta?: Record<string, unknown>;
  /** Added to (empty: removed from) the valid headers. */
  headers?: Record<string, string>;
}

/** A raw modern (2026-07-28) POST /mcp from a client named `name`: valid unless spoiled. */
async function postModern(port: number, request: ModernRequest) {
  const { name, version = '1', method = 'tools/list', id = 1 } = request;
  const headers: Record<string, string> = {
    ...authHeader,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    ...request.headers,
  };
  for (const [key, value] of Object.entries(headers)) if (value === '') delete headers[key];
  const meta = {
    [CLIENT_INFO_KEY]: { name, version },
    [CAPABILITIES_KEY]: {},
    [VERSION_KEY]: '2026-07-28',
    ...request.meta,
  };
  return rawRequest({
    port,
    method: 'POST',
    path: '/mcp',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      ...(id === null ? {} : { id }),
      method,
      params: { ...(id === null ? { requestId: 0 } : {}), _meta: meta },
    }),
  });
}

function textOf(result: CallToolResult): string {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('expected a text block first');
  return first.text;
}

describe.each<Leg>(['legacy-http', 'modern-http', 'sse'])('the %s leg', (leg) => {
  it('lists every tool with its schemas and annotations', async () => {
    const server = await listen();
    const { client } = await connect(server, leg);
    expect(client.getProtocolEra()).toBe(leg === 'modern-http' ? 'modern' : 'legacy');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(testTools.map((tool) => tool.name));
    const echo = tools.find((tool) => tool.name === 'echo');
    expect(echo).toMatchObject({
      title: 'Echo',
      description: expect.stringContaining('Returns its message'),
      inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
      outputSchema: { type: 'object', properties: { zeta: { type: 'string' } } },
      annotations: readOnlyLocal,
    });
    expect(tools.find((tool) => tool.name === 'crash')?.annotations?.idempotentHint).toBe(false);
  });

  it('announces serverInfo and instructions', async () => {
    const server = await listen({ instructions: 'Read files with echo.' });
    const { client } = await connect(server, leg);
    expect(client.getServerVersion()).toMatchObject({
      name: 'grove-test-server',
      version: '9.9.9',
    });
    expect(client.getInstructions()).toBe('Read files with echo.');
  });

  it('returns structuredContent and the same JSON as text, keys sorted', async () => {
    const server = await listen();
    const { client } = await connect(server, leg);
    const result = (await client.callTool({
      name: 'echo',
      arguments: { message: 'hi' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(expectedEchoText('hi', '/tmp/grove-test-root'));
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    expect(stableStringify(result.structuredContent)).toBe(textOf(result));
  });

  it('turns a UserError into isError with its message', async () => {
    const server = await listen();
    const { client } = await connect(server, leg);
    const result = (await client.callTool({ name: 'fail', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('path escapes the worktree: ../x');
    expect(server.errors).toEqual([]);
  });

  it('turns an unexpected exception into isError and reports it', async () => {
    const server = await listen();
    const { client } = await connect(server, leg);
    const result = (await client.callTool({ name: 'crash', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('boom');
    expect(server.errors.map((error) => error.message)).toEqual([
      'tool crash failed unexpectedly: boom',
    ]);
  });

  it('aborts the tool signal when the client cancels the call', async () => {
    const server = await listen();
    const { client } = await connect(server, leg);
    const before = waitCalls.length;
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: {} }, { signal: controller.signal });
    await waitUntil(() => waitCalls.length > before, 3_000, 'wait tool started');
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitUntil(() => waitCalls[before]?.aborted === true, 3_000, 'tool signal aborted');
  });

  it('reports the tool call with the client identity', async () => {
    const server = await listen();
    const { client } = await connect(server, leg);
    await client.callTool({ name: 'echo', arguments: { message: 'x' } });
    const call = server.events.find((event) => event.type === 'tool-called');
    expect(call).toMatchObject({
      type: 'tool-called',
      tool: 'echo',
      transport: leg === 'sse' ? 'sse' : 'streamable-http',
      era: leg === 'modern-http' ? 'modern' : 'legacy',
      clientInfo: CLIENT_INFO,
      isError: false,
    });
  });
});

describe('client events', () => {
  it('reports legacy Streamable HTTP sessions opening and closing (DELETE)', async () => {
    const server = await listen();
    const { client, transport } = await connect(server, 'legacy-http');
    expect(server.events[0]).toMatchObject({
      type: 'session-opened',
      transport: 'streamable-http',
      era: 'legacy',
      clientInfo: CLIENT_INFO,
    });
    const sessionId = sessionIdOf(transport);
    expect(sessionId).toBeTruthy();
    if (!('terminateSession' in transport)) throw new Error('expected a Streamable HTTP transport');
    await transport.terminateSession();
    await client.close();
    await waitUntil(
      () => server.events.some((event) => event.type === 'session-closed'),
      3_000,
      'session-closed',
    );
    expect(server.events.find((event) => event.type === 'session-closed')).toMatchObject({
      sessionId,
      reason: 'client',
      clientInfo: CLIENT_INFO,
    });
  });

  it('reports SSE sessions opening and closing with the stream', async () => {
    const server = await listen();
    const { client } = await connect(server, 'sse');
    await waitUntil(() => server.events.length > 0, 3_000, 'session-opened');
    expect(server.events[0]).toMatchObject({
      type: 'session-opened',
      transport: 'sse',
      clientInfo: CLIENT_INFO,
    });
    await client.close();
    await waitUntil(
      () => server.events.some((event) => event.type === 'session-closed'),
      3_000,
      'session-closed',
    );
    expect(server.events.at(-1)).toMatchObject({
      type: 'session-closed',
      transport: 'sse',
      reason: 'client',
    });
  });

  it('reports modern clients as seen, with their identity', async () => {
    const server = await listen();
    const { client } = await connect(server, 'modern-http');
    await client.listTools();
    expect(server.events).toContainEqual(
      expect.objectContaining({
        type: 'client-seen',
        era: 'modern',
        method: 'tools/list',
        clientInfo: CLIENT_INFO,
      }),
    );
    expect(server.events.some((event) => event.type === 'session-opened')).toBe(false);
  });

  it('reports no modern client for a request it refuses, nor for a notification', async () => {
    const server = await listen();
    const refused: [number, ModernRequest][] = [
      [400, { name: 'no capabilities', meta: { [CAPABILITIES_KEY]: undefined } }],
      [400, { name: 'no Mcp-Method header', headers: { 'Mcp-Method': '' } }],
      [400, { name: 'an old protocol version', meta: { [VERSION_KEY]: '2025-06-18' } }],
      [404, { name: 'an unknown method', method: 'no/such/method' }],
      [403, { name: 'a wrong token', headers: { Authorization: 'Bearer wrong' } }],
      // Acknowledged (202) without its envelope being checked: no evidence of a client.
      [202, { name: 'a notification', method: 'notifications/cancelled', id: null }],
    ];
    for (const [status, request] of refused) {
      expect((await postModern(server.port, request)).status, request.name).toBe(status);
    }
    expect(server.events.filter((event) => event.type === 'client-seen')).toEqual([]);

    expect((await postModern(server.port, { name: 'accepted' })).status).toBe(200);
    expect(server.events.filter((event) => event.type === 'client-seen')).toEqual([
      expect.objectContaining({
        method: 'tools/list',
        clientInfo: { name: 'accepted', version: '1' },
      }),
    ]);
  });

  it('cuts a long clientInfo name and version to 100 characters, for both eras', async () => {
    const server = await listen();
    const response = await postModern(server.port, {
      name: 'n'.repeat(50_000),
      version: 'v'.repeat(1_000),
    });
    expect(response.status).toBe(200);
    const seen = server.events.find((event) => event.type === 'client-seen');
    expect(seen?.clientInfo).toEqual({ name: `${'n'.repeat(99)}…`, version: `${'v'.repeat(99)}…` });

    // A legacy session's initialize: same cut, and never half of a surrogate pair.
    const headers = {
      ...authHeader,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    const initialize = initializeBody() as { params: { clientInfo: object } };
    initialize.params.clientInfo = { name: '😀'.repeat(60), version: '1'.repeat(500) };
    const opened = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers,
      body: JSON.stringify(initialize),
    });
    expect(opened.status).toBe(200);
    const initialized = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers: {
        ...headers,
        'Mcp-Session-Id': String(opened.headers['mcp-session-id']),
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(initialized.status).toBe(202);
    await waitUntil(
      () => server.events.some((event) => event.type === 'session-opened'),
      3_000,
      'session-opened',
    );
    const session = server.events.find((event) => event.type === 'session-opened');
    expect(session?.clientInfo).toEqual({
      name: `${'😀'.repeat(49)}…`,
      version: `${'1'.repeat(99)}…`,
    });
  });
});

describe('legacy sessions', () => {
  it('refuses a tool turned off to a session that never sent notifications/initialized', async () => {
    let offered = true;
    const server = await listen({ isToolOffered: (name) => offered || name !== 'echo' });
    const headers = {
      ...authHeader,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    const opened = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers,
      body: JSON.stringify(initializeBody()),
    });
    const sessionId = String(opened.headers['mcp-session-id']);
    offered = false;
    server.listener.notify.toolsChanged();
    const call = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers: { ...headers, 'Mcp-Session-Id': sessionId, 'Mcp-Protocol-Version': '2025-06-18' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: { message: 'still here?' } },
      }),
    });
    expect(call.body).toContain('"isError":true');
    expect(call.body).toContain('not offered');
    expect(call.body).not.toContain('"zeta"');
  });

  it('answers 404 for an unknown Mcp-Session-Id', async () => {
    const server = await listen();
    const response = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers: {
        ...authHeader,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': 'no-such-session',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: -32001 } });
  });

  it('refuses a legacy request without a session that is not initialize (400)', async () => {
    const server = await listen();
    const response = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers: {
        ...authHeader,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(400);
  });

  it('reaps idle Streamable HTTP sessions (none while their GET stream is open); the client then gets 404', async () => {
    const server = await listen({ sessionIdleMs: 100 });
    const { client, transport } = await connect(server, 'legacy-http');
    const sessionId = sessionIdOf(transport) ?? '';
    // Its GET stream holds the session: still there well past the idle time.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(server.events.some((event) => event.type === 'session-closed')).toBe(false);
    await client.close(); // gone without DELETE: the stream closes, the session stays, idle
    await waitUntil(
      () => server.events.some((event) => event.type === 'session-closed'),
      3_000,
      'idle session reaped',
    );
    expect(server.events.find((event) => event.type === 'session-closed')).toMatchObject({
      type: 'session-closed',
      reason: 'idle',
    });
    const response = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers: {
        ...authHeader,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sessionId,
        'Mcp-Protocol-Version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(response.status).toBe(404);
  });

  it('keeps SSE sessions while their stream is open, however idle', async () => {
    const server = await listen({ sessionIdleMs: 50 });
    const { client } = await connect(server, 'sse');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.events.some((event) => event.type === 'session-closed')).toBe(false);
    const result = (await client.callTool({
      name: 'echo',
      arguments: { message: 'still here' },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
  });

  it('evicts the least recently active session beyond maxSessions', async () => {
    const server = await listen({ maxSessions: 1 });
    const first = await connect(server, 'legacy-http');
    const firstId = sessionIdOf(first.transport);
    await connect(server, 'legacy-http');
    await waitUntil(
      () => server.events.some((event) => event.type === 'session-closed'),
      3_000,
      'eviction',
    );
    expect(server.events.find((event) => event.type === 'session-closed')).toMatchObject({
      sessionId: firstId,
      reason: 'evicted',
    });
  });

  it('answers a raw initialize POST with an Mcp-Session-Id header', async () => {
    const server = await listen();
    const response = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/mcp',
      headers: {
        ...authHeader,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(initializeBody()),
      until: (text) => text.includes('\n\n'),
    });
    expect(response.status).toBe(200);
    expect(response.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('listening', () => {
  it('serves /healthz without a token', async () => {
    const server = await listen();
    const response = await rawRequest({ port: server.port, path: '/healthz' });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ ok: true });
  });

  it('answers a challenge on /healthz with a proof of its token and port that reveals nothing else', async () => {
    const server = await listen();
    const challenge = newChallenge();
    const ask = (value: string) =>
      rawRequest({ port: server.port, path: `/healthz?challenge=${value}` });
    const response = await ask(challenge);
    expect(response.status).toBe(200);
    const answer = JSON.parse(response.body) as { ok: boolean; proof: string };
    expect(answer.ok).toBe(true);
    expect(proofMatches(TEST_TOKEN, server.port, challenge, answer.proof)).toBe(true);
    expect(proofMatches(`${TEST_TOKEN}x`, server.port, challenge, answer.proof)).toBe(false);
    expect(proofMatches(TEST_TOKEN, server.port + 1, challenge, answer.proof)).toBe(false);
    expect(proofMatches(TEST_TOKEN, server.port, newChallenge(), answer.proof)).toBe(false);
    expect(response.body).not.toContain(TEST_TOKEN);
    // A rotated token: the proof follows it.
    server.listener.setAccess({ token: `${TEST_TOKEN}-rotated`, requireToken: true });
    const rotated = (JSON.parse((await ask(challenge)).body) as { proof: string }).proof;
    expect(proofMatches(`${TEST_TOKEN}-rotated`, server.port, challenge, rotated)).toBe(true);
    // Not a challenge (not hex, too short, too long): the plain answer.
    for (const junk of ['zz'.repeat(20), 'abc', '0'.repeat(200)]) {
      expect(JSON.parse((await ask(junk)).body)).toEqual({ ok: true });
    }
  });

  it('rejects with code EADDRINUSE when the port is taken', async () => {
    const server = await listen();
    const attempt = createMcpListener({
      root: '/tmp',
      token: TEST_TOKEN,
      port: server.port,
      loadServerParts: async () => ({ tools: testTools }),
      serverInfo: { name: 'second', version: '0' },
    });
    await expect(attempt).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('binds 127.0.0.1 only', async () => {
    const server = await listen();
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '::1', port: server.port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });

  it('closes promptly with open streams and sessions; the port then refuses connections', async () => {
    const server = await startTestListener();
    const sse = await connectClient(server.port, 'sse');
    const http = await connectClient(server.port, 'legacy-http');
    const started = Date.now();
    await withTimeout(server.close(), 3_000, 'listener close');
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(server.events.filter((event) => event.type === 'session-closed')).toHaveLength(2);
    expect(
      server.events
        .filter((event) => event.type === 'session-closed')
        .every((event) => event.reason === 'shutdown'),
    ).toBe(true);
    await expect(rawRequest({ port: server.port, path: '/healthz' })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    await sse.client.close().catch(() => undefined);
    await http.client.close().catch(() => undefined);
  });
});
