// The tool console against a real MCP listener: lists and calls tools as "Grove (this window)",
// reports tool errors as results, reconnects after a token change, refuses a stopped server, and
// closes its session when the server stops or the console closes.
import { UserError } from '../platform/errors.ts';
import { afterEach, describe, expect, test } from 'vitest';
import type { HostEvent } from '../../shared/host-api.ts';
import { serverUrls, type HostSnapshot, type WorktreeState } from '../../shared/model.ts';
import { startTestListener, TEST_TOKEN, type TestListener } from '../testing/mcp-clients.ts';
import { waitFor } from '../testing/net.ts';
import { TOOL_CONSOLE_CLIENT_NAME, ToolConsole, type ToolConsoleHost } from './tool-console.ts';

let listener: TestListener | undefined;
let toolConsole: ToolConsole | undefined;
afterEach(async () => {
  await toolConsole?.close();
  await listener?.close();
});

function fakeHost(port: number) {
  let token = TEST_TOKEN;
  let worktree: WorktreeState = {
    id: '1',
    repoId: '1',
    path: '/tmp/grove-test-root',
    branch: 'main',
    isMain: true,
    port,
    portNotice: null,
    status: { state: 'running', port },
    urls: serverUrls(port),
    settings: { autostart: true, requireToken: true },
    clients: [],
    runningCalls: [],
    reconcileBase: null,
    reconcileTotals: null,
  };
  const listeners = new Set<(event: HostEvent) => void>();
  const snapshot = (): HostSnapshot => ({
    repos: [{ id: '1', path: worktree.path, name: 'repo', worktrees: [worktree] }],
    activity: {},
    reconcile: {},
  });
  const host: ToolConsoleHost = {
    getConnectionInfo: (worktreeId) => ({
      worktreeId,
      urls: worktree.urls,
      token,
      bridge: { command: 'grove', args: ['bridge', worktree.path] },
    }),
    snapshot,
    onEvent: (fn) => {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
  return {
    host,
    listeners,
    setToken: (next: string) => {
      token = next;
    },
    setWorktree: (next: Partial<WorktreeState>) => {
      worktree = { ...worktree, ...next };
      for (const fn of listeners) fn({ type: 'worktree-changed', worktree });
    },
  };
}

describe('tool console', () => {
  test('lists and calls tools as "Grove (this window)", tool errors as results', async () => {
    listener = await startTestListener();
    const fake = fakeHost(listener.port);
    toolConsole = new ToolConsole(fake.host);

    const tools = await toolConsole.listTools('1');
    expect(tools.map((tool) => tool.name)).toEqual(['echo', 'fail', 'crash', 'wait']);
    const echo = tools.find((tool) => tool.name === 'echo')!;
    expect(echo.title).toBe('Echo');
    expect(echo.inputSchema).toMatchObject({ type: 'object', required: ['message'] });

    const result = await toolConsole.callTool('1', 'echo', { message: 'hi' });
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ zeta: 'hi', alpha: 2 });

    const failed = await toolConsole.callTool('1', 'fail', {});
    expect(failed.isError).toBe(true);
    expect(JSON.stringify(failed.content)).toContain('path escapes the worktree');

    const opened = listener.events.filter((event) => event.type === 'session-opened');
    expect(opened).toHaveLength(1); // one client, reused
    expect(opened[0]!.type === 'session-opened' && opened[0]!.clientInfo?.name).toBe(
      TOOL_CONSOLE_CLIENT_NAME,
    );
    const calls = listener.events.filter((event) => event.type === 'tool-called');
    expect(calls.map((event) => event.type === 'tool-called' && event.tool)).toEqual([
      'echo',
      'fail',
    ]);
  });

  test('reconnects with the new token, refuses a stopped server, closes on stop', async () => {
    listener = await startTestListener();
    const fake = fakeHost(listener.port);
    toolConsole = new ToolConsole(fake.host);
    await toolConsole.callTool('1', 'echo', { message: 'a' });

    // The listener's token changes (as rotateToken does); the console follows the host's.
    listener.listener.setAccess({ token: 'rotated-token', requireToken: true });
    fake.setToken('rotated-token');
    const again = await toolConsole.callTool('1', 'echo', { message: 'b' });
    expect(again.isError).toBe(false);
    expect(listener.events.filter((event) => event.type === 'session-opened')).toHaveLength(2);

    // The current session closes when the server stops (the first one, opened with the old
    // token, cannot be closed with it: the listener's idle reaping ends it).
    const current = listener.events.filter((event) => event.type === 'session-opened')[1]!;
    fake.setWorktree({ status: { state: 'stopped' } });
    await waitFor(
      () =>
        listener!.events.some(
          (event) =>
            event.type === 'session-closed' &&
            current.type === 'session-opened' &&
            event.sessionId === current.sessionId,
        ),
      'the console session to close',
    );
    await expect(toolConsole.callTool('1', 'echo', { message: 'c' })).rejects.toThrow(UserError);
    await expect(toolConsole.listTools('404')).rejects.toThrow(/unknown worktree/);
  });
});
