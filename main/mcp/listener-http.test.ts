// The listener's plain-HTTP edges (it runs on node:http, not a framework): methods per route,
// request bodies it cannot take (too large, compressed, another charset, not JSON) and that the
// server keeps serving after refusing them.
import { afterEach, describe, expect, it } from 'vitest';
import {
  authHeader,
  initializeBody,
  rawRequest,
  startTestListener,
  type TestListener,
} from './mcp-test-support.ts';
import { MAX_BODY_BYTES } from './mcp-listener.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

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
