// The listener's plain-HTTP edges (it runs on node:http, not a framework): methods per route,
// request bodies it cannot take (too large, compressed, another charset, not JSON) and that the
// server keeps serving after refusing them.
import { describe, expect, it } from 'vitest';
import {
  authHeader,
  initializeBody,
  rawRequest,
  startTestListener,
  type TestListener,
} from '../testing/mcp-clients.ts';
import { MAX_BODY_BYTES } from './mcp-listener.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

async function listen(): Promise<TestListener> {
  const server = await startTestListener();
  cleanups.push(() => server.close());
  return server;
}

const jsonHeaders = {
  ...authHeader,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

function postMcp(server: TestListener, body: string | Buffer, headers: Record<string, string>) {
  return rawRequest({ port: server.port, method: 'POST', path: '/mcp', headers, body });
}

/** The server still answers a well-formed legacy initialize after a refusal. */
async function expectStillServing(server: TestListener): Promise<void> {
  const response = await postMcp(server, JSON.stringify(initializeBody()), jsonHeaders);
  expect(response.status).toBe(200);
  expect(response.headers['mcp-session-id']).toBeTruthy();
}

describe('MCP listener over plain HTTP', () => {
  it('answers each route only with its methods, naming the allowed one', async () => {
    const server = await listen();
    const getMessages = await rawRequest({
      port: server.port,
      path: '/messages?sessionId=x',
      headers: authHeader,
    });
    expect(getMessages.status).toBe(405);
    expect(getMessages.headers.allow).toBe('POST');
    expect(JSON.parse(getMessages.body)).toEqual({ error: 'method not allowed: use POST' });
    const postSse = await rawRequest({
      port: server.port,
      method: 'POST',
      path: '/sse',
      headers: jsonHeaders,
      body: '{}',
    });
    expect(postSse.status).toBe(405);
    expect(postSse.headers.allow).toBe('GET');
    const head = await rawRequest({ port: server.port, method: 'HEAD', path: '/healthz' });
    expect(head.status).toBe(200);
  });

  it('refuses a body declared larger than 4 MiB before reading it', async () => {
    const server = await listen();
    const response = await postMcp(server, Buffer.alloc(MAX_BODY_BYTES + 1, 0x20), jsonHeaders);
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32600, message: `Request body exceeds ${MAX_BODY_BYTES} bytes` },
    });
    await expectStillServing(server);
  });

  it('cuts off a chunked body that grows past 4 MiB', async () => {
    const server = await listen();
    const response = await postMcp(server, Buffer.alloc(MAX_BODY_BYTES + 1024, 0x20), {
      ...jsonHeaders,
      'Transfer-Encoding': 'chunked',
    });
    expect(response.status).toBe(413);
    await expectStillServing(server);
  });

  it('refuses compressed bodies and charsets other than UTF-8 with 415', async () => {
    const server = await listen();
    const body = JSON.stringify(initializeBody());
    const gzip = await postMcp(server, body, { ...jsonHeaders, 'Content-Encoding': 'gzip' });
    expect(gzip.status).toBe(415);
    expect(JSON.parse(gzip.body).error.message).toBe('Unsupported Content-Encoding: gzip');
    const latin1 = await postMcp(server, body, {
      ...jsonHeaders,
      'Content-Type': 'application/json; charset=latin1',
    });
    expect(latin1.status).toBe(415);
    expect(JSON.parse(latin1.body).error.message).toBe('Unsupported charset: latin1 (use utf-8)');
    const utf8 = await postMcp(server, body, {
      ...jsonHeaders,
      'Content-Type': 'application/json; charset=UTF-8',
    });
    expect(utf8.status).toBe(200);
  });

  it('answers malformed JSON and non-JSON media types with JSON-RPC errors', async () => {
    const server = await listen();
    const malformed = await postMcp(server, '{"jsonrpc":', jsonHeaders);
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ error: { code: -32700 } });
    const text = await postMcp(server, JSON.stringify(initializeBody()), {
      ...jsonHeaders,
      'Content-Type': 'text/plain',
    });
    expect(text.status).toBe(415);
    await expectStillServing(server);
  });
});

describe('hostile requests get a 4xx, never a 500 or a crash', () => {
  it('unknown methods on /mcp: 405 with Allow and a JSON-RPC error', async () => {
    const server = await listen();
    for (const method of ['TRACE', 'PROPFIND', 'PATCH', 'OPTIONS', 'PUT']) {
      const response = await rawRequest({
        port: server.port,
        method,
        path: '/mcp',
        headers: jsonHeaders,
      });
      expect(response.status, method).toBe(405);
      expect(response.headers.allow).toBe('GET, POST, DELETE');
      expect(JSON.parse(response.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
    expect(server.errors).toEqual([]);
    await expectStillServing(server);
  });

  it('JSON nested 100,000 levels deep: a parse error, on /mcp and /messages', async () => {
    const server = await listen();
    const arrays = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const objects = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    for (const body of [arrays, objects]) {
      for (const path of ['/mcp', '/messages?sessionId=x']) {
        const response = await rawRequest({
          port: server.port,
          method: 'POST',
          path,
          headers: jsonHeaders,
          body,
        });
        expect(response.status, path).toBe(400);
        expect(JSON.parse(response.body)).toMatchObject({
          error: { code: -32700, message: 'Parse error: JSON nested deeper than 64 levels' },
        });
      }
    }
    // Deep-looking text inside a string is only text.
    const initialize = initializeBody() as { params: { clientInfo: { name: string } } };
    initialize.params.clientInfo.name = `client ${'['.repeat(1000)}`;
    const quoted = JSON.stringify(initialize);
    expect((await postMcp(server, quoted, jsonHeaders)).status).toBe(200);
    expect(server.errors).toEqual([]);
    await expectStillServing(server);
  });

  it('a batch of more than 100 messages is refused with a JSON-RPC error', async () => {
    const server = await listen();
    const batch = JSON.stringify(
      Array.from({ length: 101 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'ping' })),
    );
    const response = await postMcp(server, batch, jsonHeaders);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({
      error: { code: -32600, message: 'Invalid Request: a batch of 101 messages; at most 100' },
    });
    await expectStillServing(server);
  });
});
