// Progress of slow calls: a tool's own progress reports and the server's heartbeat reach an SDK
// client that asked for progress, on every leg, with progress always growing.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, readOnlyLocal } from '../tools/tool-definition.ts';
import { connectClient, startTestListener, type Leg } from '../testing/mcp-clients.ts';

const slowTool = defineTool({
  name: 'slow',
  title: 'Slow',
  description: 'Reports half-way progress, then works a little longer.',
  inputSchema: z.object({}),
  outputSchema: z.object({ done: z.boolean() }),
  annotations: readOnlyLocal,
  handler: async (_args, { progress }) => {
    progress?.(1, 2, 'half-way');
    await new Promise((resolve) => setTimeout(resolve, 400));
    return { done: true };
  },
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('progress notifications', () => {
  it.each<Leg>(['sse', 'legacy-http', 'modern-http'])(
    'reach a %s client that asked for them, with a heartbeat while the call runs',
    async (leg) => {
      const server = await startTestListener({ tools: [slowTool], progressIntervalMs: 100 });
      cleanups.push(() => server.close());
      const { client } = await connectClient(server.port, leg);
      cleanups.push(() => client.close());
      const seen: { progress: number; total?: number; message?: string }[] = [];
      const result = await client.callTool(
        { name: 'slow', arguments: {} },
        { onprogress: (notification) => seen.push(notification) },
      );
      expect(result.structuredContent).toEqual({ done: true });
      expect(seen[0]).toMatchObject({ progress: 1, total: 2, message: 'half-way' });
      expect(seen.some((entry) => /^still working \(\d+ s\)$/.test(entry.message ?? ''))).toBe(
        true,
      );
      for (let index = 1; index < seen.length; index++) {
        expect(seen[index]!.progress).toBeGreaterThan(seen[index - 1]!.progress);
      }
    },
  );
});
