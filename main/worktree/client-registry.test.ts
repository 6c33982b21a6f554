// Client states as the window shows them (shared/clients.ts), from a real listener and real SDK
// clients: an SSE client is connected while its stream is open; a Streamable HTTP session is
// active while it sends requests, idle after a minute of silence, connected while its GET stream is
// open, reaped after the idle time, and closed at once by DELETE; Grove's own window is never
// counted.
import { afterEach, describe, expect, it } from 'vitest';
import {
  ACTIVE_WINDOW_MS,
  clientState,
  connectedClientCount,
  GROVE_WINDOW_CLIENT_NAME,
} from '../../shared/clients.ts';
import type { ClientInfo } from '../../shared/model.ts';
import {
  authHeader,
  connectClient,
  rawRequest,
  startTestListener,
  waitCalls,
} from '../testing/mcp-clients.ts';
import { waitFor } from '../testing/net.ts';
import { ClientRegistry } from './client-registry.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/** A real listener whose client events feed a registry, as in the worktree process. */
async function listenerWithRegistry(sessionIdleMs?: number, flushMs = 10) {
  let latest: ClientInfo[] = [];
  const sent: ClientInfo[][] = [];
  const registry = new ClientRegistry({
    onClients: (clients) => {
      latest = clients;
      sent.push(clients);
    },
    onActivity: () => undefined,
    flushMs,
  });
  cleanups.push(async () => registry.flush()); // runs last: no flush timer outlives the test
  const server = await startTestListener({
    onClientEvent: (event) => registry.handle(event),
    ...(sessionIdleMs === undefined ? {} : { sessionIdleMs }),
  });
  cleanups.push(() => server.close());
  return { server, registry, sent, clients: () => latest };
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

  it('a Streamable HTTP client that abandons its session turns idle, then is reaped; DELETE closes at once', async () => {
    const { server, clients } = await listenerWithRegistry(400);
    // Abandoned: initialize, one call, then gone without a DELETE (as a CLI that ran one command
    // and exited): its GET stream closes, its session stays.
    const abandoned = await connectClient(server.port, 'legacy-http');
    await abandoned.client.listTools();
    await waitFor(() => clients()[0]?.streamOpen === true, 'its GET stream (connected)', 3000);
    expect(clientState(clients()[0]!, Date.now())).toBe('connected');
    await abandoned.client.close(); // no DELETE: the SDK only aborts its stream
    await waitFor(() => clients()[0]?.streamOpen === false, 'the stream to close', 3000);
    const [session] = clients();
    expect(session!.connection).toBe('open');
    const now = Date.now();
    expect(clientState(session!, now)).toBe('active');
    expect(connectedClientCount(clients(), now)).toBe(1);
    // A minute of silence: idle, and no longer counted.
    expect(clientState(session!, session!.lastActivityAt + ACTIVE_WINDOW_MS + 1)).toBe('idle');
    expect(connectedClientCount(clients(), session!.lastActivityAt + ACTIVE_WINDOW_MS + 1)).toBe(0);
    // The listener reaps it after its idle time (400 ms here; 5 min by default).
    await waitFor(() => clients()[0]?.connection === 'closed', 'the session to be reaped', 5000);

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
