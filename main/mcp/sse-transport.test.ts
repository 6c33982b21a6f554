// The legacy SSE leg: first frame, keep-alive, batches, body limits, stream lifetime.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { capUnreadOutput, SseBacklogBudget, SseServerTransport } from './sse-transport.ts';
import {
  authHeader,
  initializeBody,
  openSseStream,
  rawRequest,
  startTestListener,
  waitUntil,
} from '../testing/mcp-clients.ts';
import type { SseStream, TestListener } from '../testing/mcp-clients.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(keepAliveMs?: number): Promise<TestListener> {
  const server = await startTestListener(keepAliveMs === undefined ? {} : { keepAliveMs });
  cleanups.push(() => server.close());
  return server;
}

async function open(server: TestListener): Promise<{ stream: SseStream; endpoint: string }> {
  const stream = await openSseStream(server.port);
  cleanups.push(() => stream.close());
  const text = await stream.waitFor((received) => received.includes('\n\n'));
  const endpoint = /data: (\/messages\?sessionId=[^\n]+)/.exec(text)?.[1];
  if (!endpoint) throw new Error(`no endpoint event in ${text}`);
  return { stream, endpoint };
}

function post(server: TestListener, path: string, body: unknown) {
  return rawRequest({
    port: server.port,
    method: 'POST',
    path,
    headers: { ...authHeader, 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Serves `handler` on 127.0.0.1 (closed after the test, connections too); its port. */
async function serve(handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

describe('the legacy SSE leg', () => {
  it('starts with a retry line and the endpoint event', async () => {
    const server = await listen();
    const stream = await openSseStream(server.port);
    cleanups.push(() => stream.close());
    expect(stream.status).toBe(200);
    const text = await stream.waitFor((received) => received.includes('\n\n'));
    expect(text).toMatch(
      /^retry: 500\nevent: endpoint\ndata: \/messages\?sessionId=[0-9a-f-]{36}\n\n/,
    );
  });

  it('sends keepalive comments at the configured interval', async () => {
    const server = await listen(50);
    const { stream } = await open(server);
    const text = await stream.waitFor(
      (received) => received.split(': keepalive\n\n').length >= 3,
      2_000,
    );
    expect(text).toContain(': keepalive\n\n');
  });

  it('splits a JSON-RPC batch and answers each request on the stream', async () => {
    const server = await listen();
    const { stream, endpoint } = await open(server);
    expect((await post(server, endpoint, initializeBody(1))).status).toBe(202);
    await stream.waitFor((text) => text.includes('"id":1'));
    const batch = [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    ];
    expect((await post(server, endpoint, batch)).status).toBe(202);
    const text = await stream.waitFor((received) => received.includes('"id":3'));
    expect(text).toMatch(/event: message\ndata: \{"result":\{"tools":\[/);
    expect(text).toContain('"id":2');
  });

  it('refuses a body that is not JSON-RPC with 400', async () => {
    const server = await listen();
    const { endpoint } = await open(server);
    const response = await post(server, endpoint, { hello: 'world' });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: -32600 } });
    expect((await post(server, endpoint, [])).status).toBe(400);
  });

  it('refuses malformed JSON with a JSON-RPC parse error', async () => {
    const server = await listen();
    const { endpoint } = await open(server);
    const response = await post(server, endpoint, '{"jsonrpc":');
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: -32700 } });
  });

  it('accepts bodies up to 4 MiB and refuses larger ones with 413', async () => {
    const server = await listen();
    const { endpoint } = await open(server);
    const message = (size: number) =>
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { data: 'x'.repeat(size) },
      });
    expect((await post(server, endpoint, message(3 * 1024 * 1024))).status).toBe(202);
    const tooBig = await post(server, endpoint, message(4 * 1024 * 1024 + 1));
    expect(tooBig.status).toBe(413);
  });

  it('ends the session when the client drops the stream', async () => {
    const server = await listen();
    const { stream, endpoint } = await open(server);
    stream.close();
    // The close travels asynchronously: poll the endpoint until the session is gone.
    let status = 202;
    const deadline = Date.now() + 3_000;
    while (status !== 404 && Date.now() < deadline) {
      status = (await post(server, endpoint, initializeBody())).status;
      if (status !== 404) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(404);
  });
});

describe('SseServerTransport', () => {
  it('fires onclose exactly once, whoever closes first', async () => {
    let transport: SseServerTransport | undefined;
    const port = await serve((_req, res) => {
      transport = new SseServerTransport({ res, endpoint: '/m', keepAliveMs: 0, retryMs: 500 });
      void transport.start();
    });
    const stream = await openSseStream(port, '/', {});
    await stream.waitFor((text) => text.includes('event: endpoint'));
    let closes = 0;
    if (!transport) throw new Error('no transport');
    const open = transport;
    open.onclose = () => closes++;
    expect(open.isOpen).toBe(true);
    await open.close();
    await open.close();
    stream.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closes).toBe(1);
    expect(open.isOpen).toBe(false);
    await expect(open.send({ jsonrpc: '2.0', method: 'ping', id: 1 })).rejects.toThrow('not open');
  });

  it('cuts a stream whose client stopped reading once its unread output passes the cap', async () => {
    let transport: SseServerTransport | undefined;
    const port = await serve((_req, res) => {
      transport = new SseServerTransport({
        res,
        endpoint: '/m',
        keepAliveMs: 0,
        retryMs: 500,
        maxBacklogBytes: 256 * 1024,
      });
      void transport.start();
    });
    let cut = false;
    const response = await new Promise<http.IncomingMessage>((resolve) => {
      http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
        res.once('data', () => {
          res.pause();
          res.socket.pause(); // never read again
          resolve(res);
        });
        res.on('close', () => (cut = true));
      });
    });
    cleanups.push(() => response.destroy());
    if (!transport) throw new Error('no transport');
    const open = transport;
    let closes = 0;
    open.onclose = () => closes++;
    const message = { jsonrpc: '2.0' as const, method: 'notice', params: { x: 'y'.repeat(16384) } };
    let sent = 0;
    while (open.isOpen && sent < 10_000) {
      await open.send(message);
      sent++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(open.isOpen).toBe(false); // the client's socket buffers hold a few MiB at most
    expect(closes).toBe(1);
    await expect(open.send(message)).rejects.toThrow('not open');
    response.socket.resume();
    response.resume();
    await waitUntil(() => cut, 5_000, 'the stream cut');
  });

  it('capUnreadOutput: a response whose client stopped reading is cut past the cap; one read as it goes is not', async () => {
    const CHUNK = 'z'.repeat(16 * 1024);
    const served: { res: http.ServerResponse; writes: number }[] = [];
    // Frames of 16 KiB, one per turn of the event loop (as answers come): 64 MiB for the client
    // that stops reading (its socket buffers take a few MiB), 4 MiB for the one that reads.
    const port = await serve((req, res) => {
      capUnreadOutput(res, { maxBytes: 256 * 1024, budget: new SseBacklogBudget(1024 ** 3) });
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const state = { res, writes: 0 };
      served.push(state);
      const frames = req.url === '/stalls' ? 4096 : 256;
      void (async () => {
        while (!res.destroyed && state.writes < frames) {
          expect(res.write(`data: ${CHUNK}\n\n`)).toBe(true); // never "wait for drain"
          state.writes++;
          await new Promise((resolve) => setImmediate(resolve));
        }
        if (!res.destroyed) res.end();
      })();
    });
    // A client that stops reading after the first bytes: its response is cut.
    let stalledClosed = false;
    await new Promise<void>((resolve) => {
      http.get({ host: '127.0.0.1', port, path: '/stalls', agent: false }, (res) => {
        res.once('data', () => {
          res.pause();
          res.socket.pause();
          resolve();
        });
        res.on('close', () => (stalledClosed = true));
        res.on('error', () => (stalledClosed = true));
      });
    });
    await waitUntil(() => served[0]?.res.destroyed === true, 5_000, 'the unread response cut');
    expect(served[0]!.writes).toBeLessThan(4096);
    // A client that reads as it goes gets all 4 MiB, well past the cap.
    const received = await new Promise<number>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      });
    });
    expect(received).toBe(256 * (CHUNK.length + 8));
    expect(served[1]!.writes).toBe(256); // all written, none cut
    expect(stalledClosed || served[0]!.res.destroyed).toBe(true);
  });

  it('cuts the stream holding the most once the backlogs of all streams pass their total cap', async () => {
    const budget = new SseBacklogBudget(512 * 1024);
    const transports: SseServerTransport[] = [];
    const port = await serve((_req, res) => {
      const transport = new SseServerTransport({
        res,
        endpoint: '/m',
        keepAliveMs: 0,
        retryMs: 500,
        maxBacklogBytes: 1024 * 1024 * 1024, // only the total cap applies
        backlogBudget: budget,
      });
      transports.push(transport);
      void transport.start();
    });
    const connect = (read: boolean) =>
      new Promise<http.IncomingMessage>((resolve) => {
        http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
          res.once('data', () => {
            if (!read) {
              res.pause();
              res.socket.pause();
            }
            resolve(res);
          });
        });
      });
    const responses = [await connect(false), await connect(false), await connect(true)];
    for (const response of responses) cleanups.push(() => response.destroy());
    const [first, second, reader] = transports as [
      SseServerTransport,
      SseServerTransport,
      SseServerTransport,
    ];
    const message = { jsonrpc: '2.0' as const, method: 'notice', params: { x: 'y'.repeat(16384) } };
    // The first stream falls behind four times as fast as the second (32 MiB sent at most).
    for (let sent = 0; first.isOpen && sent < 2_000; sent++) {
      await first.send(message);
      if (sent % 4 === 0 && second.isOpen) await second.send(message);
      await reader.send(message);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(first.isOpen).toBe(false);
    expect(second.isOpen).toBe(true);
    expect(reader.isOpen).toBe(true);
  });
});
