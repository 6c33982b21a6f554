// The security checks: predicates, and 403 JSON refusals on /sse, /messages and /mcp.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localhostAllowedOrigins, validateOriginHeader } from '@modelcontextprotocol/server';
import { isAllowedHost, isAllowedOrigin, tokenMatches } from '../platform/http/request-guard.ts';
import {
  authHeader,
  initializeBody,
  openSseStream,
  rawRequest,
  startTestListener,
  TEST_TOKEN,
} from '../testing/mcp-clients.ts';
import type { RawResponse, TestListener } from '../testing/mcp-clients.ts';

describe('guard predicates', () => {
  it('allows only loopback Host names on this exact port', () => {
    expect(isAllowedHost('127.0.0.1:4000', 4000)).toBe(true);
    expect(isAllowedHost('localhost:4000', 4000)).toBe(true);
    expect(isAllowedHost('LOCALHOST:4000', 4000)).toBe(true);
    expect(isAllowedHost('[::1]:4000', 4000)).toBe(true);
    expect(isAllowedHost('127.0.0.1:4001', 4000)).toBe(false);
    expect(isAllowedHost('127.0.0.1', 4000)).toBe(false);
    expect(isAllowedHost('evil.example:4000', 4000)).toBe(false);
    expect(isAllowedHost('localhost.evil.example:4000', 4000)).toBe(false);
    expect(isAllowedHost(undefined, 4000)).toBe(false);
  });

  it('allows an absent Origin and localhost origins on any port, nothing else', () => {
    expect(isAllowedOrigin(undefined)).toBe(true);
    expect(isAllowedOrigin('http://localhost:5173')).toBe(true);
    expect(isAllowedOrigin('http://127.0.0.1:1')).toBe(true);
    expect(isAllowedOrigin('http://[::1]:8080')).toBe(true);
    expect(isAllowedOrigin('null')).toBe(false);
    expect(isAllowedOrigin('https://evil.example')).toBe(false);
    expect(isAllowedOrigin('http://localhost.evil.example')).toBe(false);
    expect(isAllowedOrigin('file://')).toBe(false);
  });

  it("decides every Origin as the SDK's validateOriginHeader with the localhost allowlist", () => {
    const origins = [
      undefined,
      '',
      'http://localhost',
      'https://LOCALHOST:443',
      'http://127.0.0.1:65535',
      'http://[::1]',
      'http://[0:0:0:0:0:0:0:1]:80',
      'http://127.0.0.2',
      'http://localhost.',
      'http://user@localhost:1',
      'chrome-extension://abcdef',
      'moz-extension://*',
      'null',
      'not a url',
      'http://',
      'file:///etc/passwd',
      'http://evil.example#localhost',
      'http://localhost%2eevil.example',
    ];
    for (const origin of origins) {
      expect(isAllowedOrigin(origin), String(origin)).toBe(
        validateOriginHeader(origin, localhostAllowedOrigins()).ok,
      );
    }
  });

  it('compares tokens of any length without throwing', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abd', 'abc')).toBe(false);
    expect(tokenMatches('', 'abc')).toBe(false);
    expect(tokenMatches('abcdef', 'abc')).toBe(false);
  });
});

describe('security on every route', () => {
  let server: TestListener;
  beforeAll(async () => {
    server = await startTestListener();
  });
  afterAll(async () => {
    await server.close();
  });

  const jsonHeaders = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
  };

  /** One request per route, with extra headers and an optional query string. */
  function hit(
    route: 'sse' | 'messages' | 'mcp',
    headers: Record<string, string>,
    query = '',
  ): Promise<RawResponse> {
    const port = server.port;
    switch (route) {
      case 'sse':
        return rawRequest({ port, path: `/sse${query ? `?${query}` : ''}`, headers });
      case 'messages':
        return rawRequest({
          port,
          method: 'POST',
          path: `/messages?sessionId=not-a-session${query ? `&${query}` : ''}`,
          headers: { ...jsonHeaders, ...headers },
          body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        });
      case 'mcp':
        return rawRequest({
          port,
          method: 'POST',
          path: `/mcp${query ? `?${query}` : ''}`,
          headers: { ...jsonHeaders, ...headers },
          body: JSON.stringify(initializeBody()),
          until: (text) => text.includes('\n\n'),
        });
    }
  }

  /** What an authorized request gets on each route (the guard let it through). */
  const authorizedStatus = { sse: 200, messages: 404, mcp: 200 } as const;

  function expectForbidden(response: RawResponse, text: string): void {
    expect(response.status).toBe(403);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(response.body) as { error: string };
    expect(body.error).toContain(text);
    expect(body.error).not.toContain(TEST_TOKEN);
  }

  describe.each(['sse', 'messages', 'mcp'] as const)('%s', (route) => {
    it('refuses a request without a token with 403 JSON (never 401)', async () => {
      expectForbidden(await hit(route, {}), 'missing token');
    });

    it('refuses a wrong Bearer token', async () => {
      expectForbidden(await hit(route, { Authorization: 'Bearer nope' }), 'wrong token');
    });

    it('refuses a wrong ?token=', async () => {
      expectForbidden(await hit(route, {}, 'token=nope'), 'wrong token');
    });

    it('accepts the Bearer token', async () => {
      expect((await hit(route, authHeader)).status).toBe(authorizedStatus[route]);
    });

    it('accepts ?token=', async () => {
      expect((await hit(route, {}, `token=${TEST_TOKEN}`)).status).toBe(authorizedStatus[route]);
    });

    it('accepts a localhost Origin on another port', async () => {
      const response = await hit(route, { ...authHeader, Origin: 'http://localhost:5173' });
      expect(response.status).toBe(authorizedStatus[route]);
    });

    it('refuses a foreign Origin even with the token', async () => {
      expectForbidden(
        await hit(route, { ...authHeader, Origin: 'https://evil.example' }),
        'Origin',
      );
    });

    it('refuses Origin: null even with the token', async () => {
      expectForbidden(await hit(route, { ...authHeader, Origin: 'null' }), 'Origin');
    });

    it('refuses a foreign Host even with the token', async () => {
      expectForbidden(
        await hit(route, { ...authHeader, Host: `evil.example:${server.port}` }),
        'Host',
      );
    });

    it('refuses the right host name on the wrong port', async () => {
      expectForbidden(await hit(route, { ...authHeader, Host: 'localhost:1' }), 'Host');
    });

    it('accepts Host localhost:PORT', async () => {
      const response = await hit(route, { ...authHeader, Host: `localhost:${server.port}` });
      expect(response.status).toBe(authorizedStatus[route]);
    });
  });

  it('checks Host and Origin on /healthz too', async () => {
    const port = server.port;
    const foreignHost = await rawRequest({ port, path: '/healthz', headers: { Host: 'evil:1' } });
    expect(foreignHost.status).toBe(403);
    const foreignOrigin = await rawRequest({
      port,
      path: '/healthz',
      headers: { Origin: 'https://evil.example' },
    });
    expect(foreignOrigin.status).toBe(403);
  });

  it('requires the token on unknown paths too', async () => {
    expect((await rawRequest({ port: server.port, path: '/.well-known/x' })).status).toBe(403);
    expect(
      (await rawRequest({ port: server.port, path: '/nothing', headers: authHeader })).status,
    ).toBe(404);
  });

  it('accepts a live SSE session id on POST /messages without a token', async () => {
    const stream = await openSseStream(server.port);
    try {
      const text = await stream.waitFor((received) => received.includes('sessionId='));
      const endpoint = /data: (\/messages\?sessionId=[^\n]+)/.exec(text)?.[1] ?? '';
      const response = await rawRequest({
        port: server.port,
        method: 'POST',
        path: endpoint,
        headers: jsonHeaders,
        body: JSON.stringify(initializeBody()),
      });
      expect(response.status).toBe(202);
    } finally {
      stream.close();
    }
  });

  it('answers 404 (not 403) to a token holder posting to an unknown SSE session', async () => {
    const response = await hit('messages', authHeader);
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ error: expect.stringContaining('session') });
  });
});
