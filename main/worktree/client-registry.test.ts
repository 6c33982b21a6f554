// Client states as the window shows them (shared/clients.ts), from a real listener and real SDK
// clients: an SSE client is connected while its stream is open; a Streamable HTTP session is
// connected while its GET stream is open, closed once that stream is gone for good (its client
// exited without a DELETE) or at once by DELETE, active while it sends requests without a stream,
// idle after a minute of silence; a client behind `grove bridge` is stdio; a client that made no
// call (a health check) leaves the list after its grace and is counted; Grove's own window is
// never counted.
import { describe, expect, it } from 'vitest';
import {
  ACTIVE_WINDOW_MS,
  clientState,
  connectedClientCount,
  GROVE_WINDOW_CLIENT_NAME,
} from '../../shared/clients.ts';
import type { ClientInfo } from '../../shared/model.ts';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { BRIDGE_HEADER } from '../mcp/client-events.ts';
import {
  authHeader,
  CLIENT_INFO,
  connectClient,
  initializeBody,
  openSseStream,
  rawRequest,
  startTestListener,
  waitCalls,
} from '../testing/mcp-clients.ts';
import { waitFor } from '../testing/net.ts';
import { ClientRegistry } from './client-registry.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

/** A real listener whose client events feed a registry, as in the worktree process. */
async function listenerWithRegistry(
  sessionIdleMs?: number,
  flushMs = 10,
  timings: { probeGraceMs?: number; streamGoneMs?: number } = {},
) {
  let latest: ClientInfo[] = [];
  const sent: ClientInfo[][] = [];
  let healthChecks = 0;
  const registry = new ClientRegistry({
    onClients: (clients, dropped) => {
      latest = clients;
      sent.push(clients);
      healthChecks += dropped;
    },
    onActivity: () => undefined,
    flushMs,
    ...timings,
  });
  cleanups.push(async () => registry.close()); // runs last: no timer outlives the test
  const server = await startTestListener({
    onClientEvent: (event) => registry.handle(event),
    ...(sessionIdleMs === undefined ? {} : { sessionIdleMs }),
  });
  cleanups.push(() => server.close());
  return { server, registry, sent, clients: () => latest, healthChecks: () => healthChecks };
}

/**
 * A raw modern (2026-07-28) tools/list from a client named `name`; `valid: false` leaves out the
 * client capabilities the envelope must carry, and the server refuses it (400).
 */
async function postModern(port: number, name: string, valid = true): Promise<number> {
  const response = await rawRequest({
    port,
    method: 'POST',
    path: '/mcp',
    headers: {
      ...authHeader,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/clientInfo': { name, version: '1' },
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          ...(valid ? { 'io.modelcontextprotocol/clientCapabilities': {} } : {}),
        },
      },
    }),
  });
  return response.status;
}

const JSON_HEADERS = {
  ...authHeader,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

/** A legacy Streamable HTTP session opened with raw requests: the headers of its requests. */
async function rawSession(port: number): Promise<Record<string, string>> {
  const opened = await rawRequest({
    port,
    method: 'POST',
    path: '/mcp',
    headers: JSON_HEADERS,
    body: JSON.stringify(initializeBody()),
    until: (text) => text.includes('"result"'),
  });
  const session = {
    ...JSON_HEADERS,
    'Mcp-Session-Id': String(opened.headers['mcp-session-id']),
    'MCP-Protocol-Version': '2025-06-18',
  };
  await rawRequest({
    port,
    method: 'POST',
    path: '/mcp',
    headers: session,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return session;
}

/** An `echo` call on a raw session. */
function callEcho(port: number, session: Record<string, string>, message: string) {
  return rawRequest({
    port,
    method: 'POST',
    path: '/mcp',
    headers: session,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { message } },
    }),
    until: (text) => text.includes('"result"'),
  });
}

describe('client states', () => {
  it('an SSE client is connected while its stream is open, closed after', async () => {
    const { server, clients } = await listenerWithRegistry();
    const { client } = await connectClient(server.port, 'sse');
    await waitFor(() => clients().length === 1, 'the session to show', 3000);
    expect(clientState(clients()[0]!, Date.now() + 10 * ACTIVE_WINDOW_MS)).toBe('connected');
    expect(connectedClientCount(clients(), Date.now())).toBe(1);
    await client.close();
    await waitFor(() => clients()[0]?.connection === 'closed', 'the session to close', 3000);
    expect(clientState(clients()[0]!, Date.now())).toBe('closed');
    expect(connectedClientCount(clients(), Date.now())).toBe(0);
  });

  it('a Streamable HTTP client that exits without a DELETE is closed once its stream is gone; DELETE closes at once', async () => {
    const { server, clients } = await listenerWithRegistry(undefined, 10, { streamGoneMs: 300 });
    // Exits without a DELETE (as a CLI that ran one command): its GET stream closes, its session
    // stays on the server.
    const exited = await connectClient(server.port, 'legacy-http');
    await exited.client.callTool({ name: 'echo', arguments: { message: 'hi' } });
    await waitFor(() => clients()[0]?.streamOpen === true, 'its GET stream (connected)', 3000);
    expect(clientState(clients()[0]!, Date.now())).toBe('connected');
    await exited.client.close(); // no DELETE: the SDK only aborts its stream
    await waitFor(() => clients()[0]?.streamOpen === false, 'the stream to close', 3000);
    // Within the reconnect grace it is not called closed yet, and never "active" after it.
    await waitFor(() => clients()[0]?.connection === 'closed', 'it to show closed', 3000);
    const [gone] = clients();
    expect(clientState(gone!, Date.now())).toBe('closed');
    expect(gone!.closedAt).toBeLessThanOrEqual(Date.now());
    expect(gone!.calls).toBe(1);
    expect(connectedClientCount(clients(), Date.now())).toBe(0);

    const polite = await connectClient(server.port, 'legacy-http');
    cleanups.push(() => polite.client.close());
    await waitFor(() => clients().some((c) => c.connection === 'open'), 'a second session', 3000);
    const transport = polite.transport;
    if (!('terminateSession' in transport)) throw new Error('expected Streamable HTTP');
    await transport.terminateSession();
    await waitFor(
      () => clients().every((c) => c.connection === 'closed'),
      'DELETE to close it',
      1000,
    );
  });

  it('a session shown closed after its stream went away is open again when it sends a request', async () => {
    const { server, clients } = await listenerWithRegistry(undefined, 10, { streamGoneMs: 200 });
    const session = await rawSession(server.port);
    const stream = await openSseStream(server.port, '/mcp', session);
    await waitFor(() => clients()[0]?.streamOpen === true, 'the GET stream', 3000);
    stream.close();
    await waitFor(() => clients()[0]?.connection === 'closed', 'closed once gone', 3000);
    const call = await callEcho(server.port, session, 'back');
    expect(call.status).toBe(200);
    await waitFor(() => clients()[0]?.connection === 'open', 'open again', 3000);
    expect(clients()[0]!.calls).toBe(1);
    expect(clients()[0]!.closedAt).toBeUndefined();
    expect(clientState(clients()[0]!, Date.now())).toBe('active');
  });

  it('a session without a stream is active, then idle; reaped, it is closed with its last activity kept', async () => {
    const { server, clients } = await listenerWithRegistry(400);
    const session = await rawSession(server.port);
    await callEcho(server.port, session, 'one');
    await waitFor(() => clients()[0]?.calls === 1, 'the call', 3000);
    const [active] = clients();
    expect(clientState(active!, Date.now())).toBe('active');
    expect(clientState(active!, active!.lastActivityAt + ACTIVE_WINDOW_MS + 1)).toBe('idle');
    await waitFor(() => clients()[0]?.connection === 'closed', 'the reaper', 5000);
    expect(clients()[0]!.lastActivityAt).toBe(active!.lastActivityAt);
    expect(clients()[0]!.closedAt).toBeGreaterThan(active!.lastActivityAt);
  });

  it('modern clients: refused requests are never listed; at most 50, the most recently seen', async () => {
    const { server, clients } = await listenerWithRegistry();
    for (let i = 0; i < 20; i++) {
      expect(await postModern(server.port, `refused ${i} ${'x'.repeat(5_000)}`, false)).toBe(400);
    }
    for (let i = 0; i < 60; i++) expect(await postModern(server.port, `client ${i}`)).toBe(200);
    await waitFor(
      () => clients().some((client) => client.name === 'client 59'),
      'the last client to show',
      3000,
    );
    expect(clients().map((client) => client.name)).toEqual(
      Array.from({ length: 50 }, (_, i) => `client ${i + 10}`),
    );
  });

  it('a flush that would resend the same list sends nothing', async () => {
    const { server, registry, sent } = await listenerWithRegistry(undefined, 60_000);
    const { client } = await connectClient(server.port, 'sse');
    cleanups.push(() => client.close());
    await waitFor(
      () => {
        registry.flush();
        return sent.length === 1;
      },
      'the session to show',
      3000,
    );
    // A call starting changes the running calls, not the clients list.
    const before = waitCalls.length;
    const controller = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: {} }, { signal: controller.signal });
    await waitFor(() => waitCalls.length > before, 'the call to start', 3000);
    registry.flush();
    expect(sent).toHaveLength(1);
    controller.abort();
    await call.catch(() => undefined);
  });

  it('a client that made no call leaves the list after its grace, counted as a health check', async () => {
    const { server, clients, healthChecks } = await listenerWithRegistry(undefined, 10, {
      probeGraceMs: 400,
      streamGoneMs: 100,
    });
    // A real client that works: it stays listed after it leaves.
    const worker = await connectClient(server.port, 'sse');
    await worker.client.callTool({ name: 'echo', arguments: { message: 'work' } });
    await worker.client.close();
    // Two probes, as `claude mcp list` (Streamable HTTP, no DELETE) and `gemini mcp list` (SSE):
    // connect, list tools, leave.
    for (const leg of ['legacy-http', 'sse'] as const) {
      const probe = await connectClient(server.port, leg);
      await probe.client.listTools();
      await probe.client.close();
    }
    await waitFor(
      () => clients().filter((client) => client.connection === 'closed').length === 3,
      'all three closed',
      3000,
    );
    expect(clients().map((client) => client.calls)).toEqual([1, 0, 0]);
    await waitFor(() => clients().length === 1, 'the probes to leave', 5000);
    expect(clients()[0]).toMatchObject({ calls: 1, transport: 'sse', connection: 'closed' });
    expect(healthChecks()).toBe(2);
  });

  it("Grove's own window leaves the list like a probe, but is no health check", async () => {
    const { server, clients, healthChecks } = await listenerWithRegistry(undefined, 10, {
      probeGraceMs: 200,
    });
    const client = new Client({ name: GROVE_WINDOW_CLIENT_NAME, version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`), {
        requestInit: { headers: authHeader },
      }),
    );
    await client.listTools();
    await waitFor(() => clients().length === 1, 'the window listed', 3000);
    const transport = client.transport as StreamableHTTPClientTransport;
    await transport.terminateSession();
    await client.close();
    await waitFor(() => clients().length === 0, 'the window to leave the list', 5000);
    expect(healthChecks()).toBe(0);
  });

  it('a client behind grove bridge is stdio, under its own name, in both eras', async () => {
    const { server, clients } = await listenerWithRegistry();
    const bridgedHeaders = { ...authHeader, [BRIDGE_HEADER]: '1' };
    const connect = async (name: string, modern: boolean) => {
      const client = new Client(
        { name, version: '7.0' },
        modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`), {
          requestInit: { headers: bridgedHeaders },
        }),
      );
      cleanups.push(() => client.close());
      await client.callTool({ name: 'echo', arguments: { message: name } });
    };
    await connect('Claude Desktop', false);
    await connect('a modern stdio client', true);
    const direct = await connectClient(server.port, 'modern-http');
    cleanups.push(() => direct.client.close());
    await direct.client.callTool({ name: 'echo', arguments: { message: 'direct' } });
    await waitFor(() => clients().length === 3, 'three clients', 3000);
    await waitFor(() => clients().every((client) => client.calls === 1), 'their calls', 3000);
    const byName = Object.fromEntries(clients().map((client) => [client.name, client]));
    expect(byName['Claude Desktop']).toMatchObject({ transport: 'stdio', era: 'legacy' });
    expect(byName['a modern stdio client']).toMatchObject({ transport: 'stdio', era: 'modern' });
    expect(byName[CLIENT_INFO.name]).toMatchObject({ transport: 'streamable-http', era: 'modern' });
  });

  it("never counts Grove's own window", () => {
    const now = Date.now();
    const base = {
      version: '1',
      transport: 'streamable-http' as const,
      era: 'legacy' as const,
      connection: 'open' as const,
      streamOpen: true,
      firstSeenAt: now,
      lastActivityAt: now,
      calls: 3,
    };
    const clients: ClientInfo[] = [
      { ...base, id: 'a', name: GROVE_WINDOW_CLIENT_NAME },
      { ...base, id: 'b', name: 'Claude Code' },
    ];
    expect(connectedClientCount(clients, now)).toBe(1);
  });
});
