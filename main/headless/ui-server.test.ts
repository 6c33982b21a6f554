// The UI server's HTTP edges: only the methods it serves, the one JSON body reader (size, media
// type and nesting caps) for HostApi commands; hostile requests get a 4xx, and it keeps serving.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Host } from '../host/host.ts';
import { rawRequest } from '../testing/mcp-clients.ts';
import { makeTempDir } from '../testing/temp-repo.ts';
import { startUiServer, type UiServer } from './ui-server.ts';

const TOKEN = 'u'.repeat(43);
let dir: string;
let host: Host;
let ui: UiServer;

beforeAll(async () => {
  dir = await makeTempDir('grove-ui-server-');
  const rendererDir = path.join(dir, 'renderer');
  await mkdir(rendererDir);
  await writeFile(path.join(rendererDir, 'index.html'), '<!doctype html><title>Grove</title>');
  host = await Host.open({ dataDir: path.join(dir, 'data'), worktreePollMs: 0 });
  ui = await startUiServer({ host, port: 0, token: TOKEN, rendererDir });
});

afterAll(async () => {
  await ui.close();
  await host.close();
  await rm(dir, { recursive: true, force: true });
});

const auth = { Authorization: `Bearer ${TOKEN}` };
const json = { ...auth, 'Content-Type': 'application/json' };

async function stillServing(): Promise<void> {
  const page = await rawRequest({ port: ui.port, path: '/' });
  expect(page.status).toBe(200);
  const snapshot = await rawRequest({
    port: ui.port,
    method: 'POST',
    path: '/api/getSnapshot',
    headers: json,
    body: '{}',
  });
  expect(snapshot.status).toBe(200);
  expect(JSON.parse(snapshot.body)).toHaveProperty('repos');
}

describe('UI server under hostile requests', () => {
  it('answers unknown methods with 405 and Allow', async () => {
    for (const [method, route, allow] of [
      ['TRACE', '/', 'GET, HEAD'],
      ['PUT', '/index.html', 'GET, HEAD'],
      ['DELETE', '/api/events', 'GET, HEAD'],
      ['GET', '/api/getSnapshot', 'POST'],
      ['PATCH', '/api/getSnapshot', 'POST'],
    ] as const) {
      const response = await rawRequest({ port: ui.port, method, path: route, headers: auth });
      expect(response.status, `${method} ${route}`).toBe(405);
      expect(response.headers.allow).toBe(allow);
    }
    await stillServing();
  });

  it('refuses bodies it cannot take with a 4xx naming why', async () => {
    const post = (body: string, headers: Record<string, string> = json) =>
      rawRequest({ port: ui.port, method: 'POST', path: '/api/getSnapshot', headers, body });
    const deep = await post(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(deep.status).toBe(400);
    expect(JSON.parse(deep.body).error).toMatch(/nested deeper than 64 levels/);
    expect((await post('{not json')).status).toBe(400);
    expect((await post('{}', { ...auth, 'Content-Type': 'text/plain' })).status).toBe(415);
    const huge = await post(JSON.stringify({ text: 'x'.repeat(2 * 1024 * 1024) }));
    expect(huge.status).toBe(413);
    await stillServing();
  });

  it('answers a command the user can fix with 400, its message and its code', async () => {
    const command = (name: string, body: unknown) =>
      rawRequest({
        port: ui.port,
        method: 'POST',
        path: `/api/${name}`,
        headers: json,
        body: JSON.stringify(body),
      });
    const missing = await command('addRepo', { path: '/no/such/grove/path' });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.body)).toEqual({
      error: 'path does not exist: /no/such/grove/path',
      code: 'not-found',
    });
    const unknown = await command('startServer', { worktreeId: 'nope' });
    expect(JSON.parse(unknown.body)).toEqual({
      error: 'unknown worktree id: nope',
      code: 'not-found',
    });
    await stillServing();
  });
});
