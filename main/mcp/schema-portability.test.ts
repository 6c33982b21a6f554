// Every tool's input and output schema, as a client receives it from tools/list, stays in the
// portable subset strict clients accept (Gemini, OpenAI-compatible function calling, the MCP
// Inspector's checks): no `type` arrays, every array with typed `items`, every object typed
// `object`, no `$ref` a client would have to resolve, no empty schema as `additionalProperties`
// (the Inspector's --strict warned on list_affected_specs's behaviors).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { createReconcileTools } from '../tools/reconcile-tools.ts';
import { createFileTools } from '../tools/index.ts';
import { connectClient, startTestListener, type TestListener } from '../testing/mcp-clients.ts';

/** Where a JSON Schema leaves the portable subset: one line per problem, with its JSON path. */
export function portabilityProblems(schema: unknown, at = '$'): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  if (Array.isArray(schema)) {
    return schema.flatMap((item, index) => portabilityProblems(item, `${at}[${index}]`));
  }
  const node = schema as Record<string, unknown>;
  const problems: string[] = [];
  if (Array.isArray(node['type']))
    problems.push(`${at}: type is an array ${JSON.stringify(node['type'])}`);
  if ('$ref' in node) problems.push(`${at}: $ref`);
  if (node['type'] === 'array') {
    const items = node['items'] as Record<string, unknown> | undefined;
    if (!items || typeof items !== 'object' || (!('type' in items) && !('anyOf' in items))) {
      problems.push(`${at}: array without typed items`);
    }
  }
  const extra = node['additionalProperties'];
  if (extra !== null && typeof extra === 'object' && Object.keys(extra).length === 0) {
    problems.push(`${at}: additionalProperties is an empty schema (write true)`);
  }
  if ('properties' in node && node['type'] !== 'object') {
    problems.push(`${at}: properties without type "object"`);
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === 'default' || key === 'examples' || key === 'const' || key === 'enum') continue;
    problems.push(...portabilityProblems(value, `${at}.${key}`));
  }
  return problems;
}

let server: TestListener;
let client: Client;

beforeAll(async () => {
  const engine = () => Promise.reject(new Error('not needed to list tools'));
  server = await startTestListener({
    tools: [...createFileTools(), ...createReconcileTools(engine)],
  });
  ({ client } = await connectClient(server.port, 'legacy-http'));
});

afterAll(async () => {
  await client.close();
  await server.close();
});

describe('tool schemas are portable', () => {
  it('every input and output schema of every tool', async () => {
    const { tools } = await client.listTools();
    expect(tools.length).toBe(19);
    const problems = tools.flatMap((tool) => [
      ...portabilityProblems(tool.inputSchema, `${tool.name}.inputSchema`),
      ...portabilityProblems(tool.outputSchema, `${tool.name}.outputSchema`),
    ]);
    expect(problems).toEqual([]);
  });
});
