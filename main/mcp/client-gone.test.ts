// A client that goes away mid-call takes its calls with it, on every leg: closing its transport
// (as a client does when it exits) aborts the handler's signal, so a just recipe the call runs is
// stopped rather than left to its deadline. SSE: the stream closes the session; modern: the
// request ends; legacy Streamable HTTP: the response the call would be answered on closes
// (legacy-legs.ts cancels the requests it carried).
import { afterEach, describe, expect, it } from 'vitest';
import {
  connectClient,
  startTestListener,
  waitCalls,
  waitUntil,
  type Leg,
  type TestListener,
} from '../testing/mcp-clients.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a client that goes away mid-call', () => {
  it.each<Leg>(['sse', 'legacy-http', 'modern-http'])(
    '%s: closing its transport aborts the running call',
    async (leg) => {
      waitCalls.length = 0;
      const server: TestListener = await startTestListener();
      cleanups.push(() => server.close());
      const { client } = await connectClient(server.port, leg);
      void client.callTool({ name: 'wait', arguments: {} }).catch(() => undefined);
      await waitUntil(() => waitCalls.length === 1, 5_000, 'the call to start');
      expect(waitCalls[0]!.aborted).toBe(false);
      await client.close();
      // `wait` would otherwise run for 10 s.
      await waitUntil(() => waitCalls[0]!.aborted, 5_000, 'the call to be aborted');
    },
  );

  it('legacy Streamable HTTP: a finished call cancels nothing, and the session serves on', async () => {
    const server = await startTestListener();
    cleanups.push(() => server.close());
    const { client } = await connectClient(server.port, 'legacy-http');
    cleanups.push(() => client.close());
    const first = await client.callTool({ name: 'echo', arguments: { message: 'one' } });
    const second = await client.callTool({ name: 'echo', arguments: { message: 'two' } });
    expect([first.isError ?? false, second.isError ?? false]).toEqual([false, false]);
    expect(server.errors).toEqual([]);
  });
});
