// The whole tool registry over MCP with the real SDK client: every tool is listed with its schemas
// and annotations, and a call of each returns structured content that the SDK validated against the
// advertised output schema (get_project_context with this server's own URLs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { makeTempRepo, type TempRepo } from '../testing/temp-repo.ts';
import { createFileTools } from '../tools/index.ts';
import {
  connectClient,
  echoTool,
  startTestListener,
  type TestListener,
} from '../testing/mcp-clients.ts';

let repo: TempRepo;
let server: TestListener;
let client: Client;
let port = 0;

const calls: [string, Record<string, unknown>][] = [
  ['read_file', { path: 'src/a.ts' }],
  ['read_multiple_files', { paths: ['src/a.ts', '../nope'] }],
  ['list_directory', {}],
  ['directory_tree', { max_depth: 2 }],
  ['get_file_info', { path: 'src/a.ts' }],
  ['search_files', { patterns: ['**/*.ts'] }],
  ['grep', { pattern: 'answer', context_lines: 1 }],
  ['get_project_context', {}],
];

beforeAll(async () => {
  repo = await makeTempRepo({ 'src/a.ts': 'export const answer = 42;\n' });
  const tools = createFileTools({
    serverUrls: () =>
      port === 0
        ? undefined
        : { sse: `http://127.0.0.1:${port}/sse`, streamable_http: `http://127.0.0.1:${port}/mcp` },
  });
  server = await startTestListener({ root: repo.root, tools });
  port = server.port;
  ({ client } = await connectClient(server.port, 'modern-http'));
});

afterAll(async () => {
  await client.close().catch(() => undefined);
  await server.close();
  await repo.cleanup();
});

describe('the tool registry over MCP', () => {
  it('lists every tool once, read-only, with input and output schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(calls.map(([name]) => name));
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
  });

  it.each(calls)('%s returns validated structured content', async (name, args) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(result.structuredContent).toBeDefined();
    if (name === 'get_project_context') {
      expect(result.structuredContent).toMatchObject({
        root: repo.root,
        branch: 'main',
        server: { streamable_http: `http://127.0.0.1:${port}/mcp` },
        specs: null,
      });
    }
    if (name === 'grep') {
      expect(result.structuredContent).toMatchObject({
        files: [{ path: 'src/a.ts', matches: [{ line: 1, column: 14 }] }],
      });
    }
    expect(server.errors).toEqual([]);
  });
});

describe('tool schemas', () => {
  it('are converted to JSON Schema once per process, not once per modern request', async () => {
    const conversions = { input: 0, output: 0 };
    const counted = <T extends object>(schema: T): T => {
      const standard = (
        schema as {
          '~standard': { jsonSchema: Record<'input' | 'output', (options: unknown) => unknown> };
        }
      )['~standard'];
      const original = standard.jsonSchema;
      const counting = Object.create(schema) as T;
      Object.defineProperty(counting, '~standard', {
        value: {
          ...standard,
          jsonSchema: {
            input: (options: unknown) => (conversions.input++, original.input(options)),
            output: (options: unknown) => (conversions.output++, original.output(options)),
          },
        },
      });
      return counting;
    };
    const echo = {
      ...echoTool,
      inputSchema: counted(echoTool.inputSchema),
      outputSchema: counted(echoTool.outputSchema),
    };
    const listener = await startTestListener({ root: repo.root, tools: [echo] });
    const { client: modern } = await connectClient(listener.port, 'modern-http');
    try {
      for (let call = 0; call < 5; call++) {
        const result = (await modern.callTool({
          name: 'echo',
          arguments: { message: `call ${call}` },
        })) as CallToolResult;
        expect(result.structuredContent).toMatchObject({ zeta: `call ${call}` });
      }
      await modern.listTools();
      // Each modern request has a server of its own; the conversions stay one per schema.
      expect(conversions).toEqual({ input: 1, output: 1 });
      // Validation still runs: a wrong argument is refused.
      const bad = (await modern.callTool({
        name: 'echo',
        arguments: { message: 42 },
      })) as CallToolResult;
      expect(bad.isError).toBe(true);
    } finally {
      await modern.close().catch(() => undefined);
      await listener.close();
    }
  });
});
