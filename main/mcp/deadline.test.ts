// Deadlines and cancellation: every tool call ends by its deadline, or when the window cancels it,
// with a clear error, whether or not the handler heeds its abort signal, and the server goes on
// serving other calls.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, readOnlyLocal } from '../tools/tool-definition.ts';
import { connectClient, startTestListener, type Leg } from '../testing/mcp-clients.ts';

let heededAbort: unknown;

const stuckTool = defineTool({
  name: 'stuck',
  title: 'Stuck',
  description: 'Never finishes and ignores its signal.',
  inputSchema: z.object({}),
  outputSchema: z.object({ done: z.boolean() }),
  annotations: readOnlyLocal,
  deadlineMs: 300,
  handler: () => new Promise<{ done: boolean }>(() => undefined),
});

const politeTool = defineTool({
  name: 'polite',
  title: 'Polite',
  description: 'Waits until its signal aborts.',
  inputSchema: z.object({}),
  outputSchema: z.object({ done: z.boolean() }),
  annotations: readOnlyLocal,
  deadlineMs: 300,
  handler: (_args, { signal }) =>
    new Promise<{ done: boolean }>((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        heededAbort = signal.reason;
        reject(signal.reason);
      });
    }),
});

const waitingTool = defineTool({
  name: 'waiting',
  title: 'Waiting',
  description: 'Waits (default deadline) and ignores its signal.',
  inputSchema: z.object({ label: z.string() }),
  outputSchema: z.object({ done: z.boolean() }),
  annotations: readOnlyLocal,
  handler: () => new Promise<{ done: boolean }>(() => undefined),
});

const quickTool = defineTool({
  name: 'quick',
  title: 'Quick',
  description: 'Answers at once.',
  inputSchema: z.object({}),
  outputSchema: z.object({ done: z.boolean() }),
  annotations: readOnlyLocal,
  handler: async () => ({ done: true }),
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('tool call deadlines', () => {
  it.each<Leg>(['sse', 'modern-http'])(
    'end a %s call at its deadline with an error naming it; other calls keep answering',
    async (leg) => {
      const server = await startTestListener({ tools: [stuckTool, politeTool, quickTool] });
      cleanups.push(() => server.close());
      const { client } = await connectClient(server.port, leg);
      cleanups.push(() => client.close());
      heededAbort = undefined;
      const started = performance.now();
      const [stuck, polite, quick] = await Promise.all([
        client.callTool({ name: 'stuck', arguments: {} }),
        client.callTool({ name: 'polite', arguments: {} }),
        client.callTool({ name: 'quick', arguments: {} }),
      ]);
      const elapsed = performance.now() - started;
      for (const [name, result] of [
        ['stuck', stuck],
        ['polite', polite],
      ] as const) {
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toContain(
          `${name} did not finish within its deadline of 0.3 s`,
        );
      }
      expect(String(heededAbort)).toContain('deadline'); // the handler's signal aborted
      expect(quick.structuredContent).toEqual({ done: true });
      expect(elapsed).toBeLessThan(5_000); // ended by the deadline, not by a client timeout
      expect((await client.callTool({ name: 'quick', arguments: {} })).isError).not.toBe(true);
    },
  );
});

describe('cancelling a running call', () => {
  it.each<Leg>(['sse', 'modern-http'])(
    'ends a %s call at once with the reason, reports it started and finished under one id',
    async (leg) => {
      const server = await startTestListener({ tools: [waitingTool, quickTool] });
      cleanups.push(() => server.close());
      const { client } = await connectClient(server.port, leg);
      cleanups.push(() => client.close());
      const call = client.callTool({ name: 'waiting', arguments: { label: 'x' } });
      let started: { callId: string; argumentsSummary: string } | undefined;
      for (let attempt = 0; attempt < 100 && !started; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const event = server.events.find((candidate) => candidate.type === 'tool-started');
        if (event?.type === 'tool-started') started = event;
      }
      expect(started?.argumentsSummary).toBe('{"label":"x"}');
      expect(server.listener.cancelCall(started!.callId, 'cancelled from the Grove window')).toBe(
        true,
      );
      const result = await call;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('cancelled from the Grove window');
      const finished = server.events.find((candidate) => candidate.type === 'tool-called');
      expect(finished?.type === 'tool-called' && finished.callId).toBe(started!.callId);
      // Gone: a second cancel finds nothing, and the server still answers.
      expect(server.listener.cancelCall(started!.callId, 'again')).toBe(false);
      expect((await client.callTool({ name: 'quick', arguments: {} })).isError).not.toBe(true);
    },
  );
});
