// mcp-remote (the bridge Claude Desktop uses) as a real child process, configured exactly like the
// generated Claude Desktop snippet: `--transport sse-only --header "Authorization:${AUTH}"` with
// AUTH in its environment. We speak newline-delimited JSON-RPC on its stdin/stdout.
import { describe, expect, it } from 'vitest';
import { McpRemoteBridge } from '../testing/mcp-remote-bridge.ts';
import {
  expectedEchoText,
  startTestListener,
  TEST_TOKEN,
  withTimeout,
} from '../testing/mcp-clients.ts';
import type { TestListener } from '../testing/mcp-clients.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

async function startMcpRemote(server: TestListener, token: string): Promise<McpRemoteBridge> {
  const peer = await McpRemoteBridge.start(`http://127.0.0.1:${server.port}/sse`, token);
  cleanups.push(() => peer.stop());
  return peer;
}

describe('mcp-remote --transport sse-only (Claude Desktop bridge)', () => {
  it('initializes, lists tools and calls them', async () => {
    const server = await startTestListener();
    cleanups.push(() => server.close());
    const peer = await startMcpRemote(server, TEST_TOKEN);

    const init = await peer.initialize();
    expect(init?.error, peer.stderr).toBeUndefined();
    expect(init?.result?.['serverInfo']).toMatchObject({ name: 'grove-test-server' });

    const list = await peer.request(2, 'tools/list', {});
    const tools = (list?.result?.['tools'] ?? []) as { name: string; annotations?: unknown }[];
    expect(tools.map((tool) => tool.name)).toEqual(['echo', 'fail', 'crash', 'wait']);
    expect(tools[0]?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });

    const call = await peer.request(3, 'tools/call', {
      name: 'echo',
      arguments: { message: 'via bridge' },
    });
    expect(call?.result).toMatchObject({
      content: [{ type: 'text', text: expectedEchoText('via bridge', '/tmp/grove-test-root') }],
      structuredContent: { zeta: 'via bridge' },
    });

    const failed = await peer.request(4, 'tools/call', { name: 'fail', arguments: {} });
    expect(failed?.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'path escapes the worktree: ../x' }],
    });

    // The session is listed with the bridge's own name appended to the client's.
    const opened = server.events.filter((event) => event.type === 'session-opened');
    expect(opened.length).toBeGreaterThanOrEqual(1);
    expect(opened.at(-1)).toMatchObject({
      transport: 'sse',
      clientInfo: { name: expect.stringContaining('claude-desktop-test') },
    });
    expect(peer.stderr).not.toContain(TEST_TOKEN);
  });

  it('gets a 403 with a readable reason for a wrong token, never OAuth', async () => {
    const server = await startTestListener();
    cleanups.push(() => server.close());
    const peer = await startMcpRemote(server, 'wrong-token');
    const exited = new Promise<number | null>((resolve) => peer.child.once('exit', resolve));
    peer.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'claude-desktop-test', version: '0.0.1' },
      },
    });
    await withTimeout(exited, 20_000, 'mcp-remote gives up').catch(() => undefined);
    expect(peer.stderr).toContain('403');
    expect(peer.stderr).not.toMatch(/Authentication required|authorization server/i);
    expect(server.events.filter((event) => event.type === 'session-opened')).toEqual([]);
  });
});
