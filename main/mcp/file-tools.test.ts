// The real file tools (main/tools) served over every leg against a real git repository.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { makeTempRepo } from '../testing/temp-repo.ts';
import { fileTools } from '../tools/index.ts';
import { connectClient, startTestListener } from '../testing/mcp-clients.ts';
import type { Leg } from '../testing/mcp-clients.ts';
import { stableStringify } from './stable-json.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

describe.each<Leg>(['legacy-http', 'modern-http', 'sse'])('fileTools over %s', (leg) => {
  it('lists, reads, and refuses escapes as tool errors', async () => {
    const repo = await makeTempRepo({ 'src/hello.txt': 'one\ntwo\n' });
    cleanups.push(() => repo.cleanup());
    const server = await startTestListener({ root: repo.root, tools: fileTools });
    cleanups.push(() => server.close());
    const { client } = await connectClient(server.port, leg);
    cleanups.push(() => client.close());

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(fileTools.map((tool) => tool.name));
    for (const tool of tools) {
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(tool.outputSchema).toBeDefined();
    }

    const read = (await client.callTool({
      name: 'read_file',
      arguments: { path: 'src/hello.txt' },
    })) as CallToolResult;
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ path: 'src/hello.txt', content: 'one\ntwo\n' });
    const first = read.content[0];
    expect(first?.type === 'text' ? first.text : '').toBe(stableStringify(read.structuredContent));

    const listing = (await client.callTool({
      name: 'list_directory',
      arguments: {},
    })) as CallToolResult;
    expect(listing.isError).toBeFalsy();
    expect(JSON.stringify(listing.structuredContent)).toContain('README.md');

    const escape = (await client.callTool({
      name: 'read_file',
      arguments: { path: '../outside.txt' },
    })) as CallToolResult;
    expect(escape.isError).toBe(true);
    expect(escape.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('..') });
    expect(server.errors).toEqual([]);
  });
});
