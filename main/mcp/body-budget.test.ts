// Slow request bodies from a token holder (issue 33): 600 unfinished 4 MB bodies took a worktree
// process from 80 MB to 2.4 GB for ~300 s. The bodies being read share one budget
// (MAX_BUFFERED_BODY_BYTES): past it a body is refused with 503 and a message saying why, what it
// held is given back, and other clients are still served; a body that never ends is cut by the
// request timeout. The attacker runs in a child process, so this process's memory is the server's.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_BODY_BYTES, processBodyBudget } from '../platform/http/json-body.ts';
import { TEST_TOKEN, connectClient, startTestListener, waitUntil } from '../testing/mcp-clients.ts';
import { cleanupsAfterEach } from '../testing/cleanups.ts';

const cleanups = cleanupsAfterEach();

/** Each attacker's body: 3.5 MB sent of the 4 MiB - 1 its Content-Length announces. */
const SENT_BYTES = 3_500_000;

/**
 * A child process opening `count` connections that each POST /mcp with the token, send
 * SENT_BYTES of their body and stall; it prints one JSON line per answer it gets (status 0: the
 * connection was closed without one).
 */
function slowBodies(port: number, count: number) {
  const script = `
    const net = require('node:net');
    const [port, count, sent, token] = process.argv.slice(1);
    for (let i = 0; i < Number(count); i++) {
      const socket = net.connect(Number(port), '127.0.0.1');
      let answer = '';
      let printed = false;
      const print = () => {
        if (printed) return;
        printed = true;
        const status = /^HTTP\\/1\\.1 (\\d+)/.exec(answer);
        const body = answer.indexOf('\\r\\n\\r\\n');
        console.log(JSON.stringify({ socket: i, status: status ? Number(status[1]) : 0, body: body === -1 ? '' : answer.slice(body + 4) }));
      };
      socket.on('data', (chunk) => {
        if (answer.length < 4096) answer += chunk.toString('latin1');
        if (/\\r\\n\\r\\n\\{.*\\}$/s.test(answer)) print();
      });
      socket.on('error', () => {});
      socket.on('close', print);
      socket.write('POST /mcp HTTP/1.1\\r\\nHost: 127.0.0.1:' + port + '\\r\\nAuthorization: Bearer ' + token +
        '\\r\\nContent-Type: application/json\\r\\nAccept: application/json, text/event-stream\\r\\n' +
        'Content-Length: ' + (4 * 1024 * 1024 - 1) + '\\r\\n\\r\\n');
      const start = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"';
      socket.write(start);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      let left = Number(sent) - start.length;
      const pump = () => {
        while (left > 0) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          if (!socket.write(piece)) return socket.once('drain', pump);
        }
      };
      pump();
    }
    setInterval(() => {}, 1000);
  `;
  const child = spawn(
    process.execPath,
    ['-e', script, String(port), String(count), String(SENT_BYTES), TEST_TOKEN],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  cleanups.push(async () => child.kill('SIGKILL'));
  const answers: { socket: number; status: number; body: string }[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => answers.push(JSON.parse(line)));
  return answers;
}

describe('request bodies being read', () => {
  it('share one budget: past it a body is refused with 503, and other clients are served', async () => {
    const server = await startTestListener();
    cleanups.push(() => server.close());
    const rssBefore = process.memoryUsage().rss;
    const count = 150; // 525 MB of bodies, eight times the budget
    const answers = slowBodies(server.port, count);
    // Every connection ends up either refused or holding its whole 3.5 MB within the budget.
    let peakHeld = 0;
    await waitUntil(
      () => {
        peakHeld = Math.max(peakHeld, processBodyBudget.heldBytes);
        const refused = answers.filter((answer) => answer.status === 503).length;
        return processBodyBudget.heldBytes === (count - refused) * SENT_BYTES;
      },
      60_000,
      'every slow body refused or held',
    );
    const refused = answers.filter((answer) => answer.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(
      count - Math.floor(MAX_BUFFERED_BODY_BYTES / SENT_BYTES),
    );
    expect(answers.every((answer) => answer.status === 503)).toBe(true);
    expect(JSON.parse(refused[0]!.body)).toMatchObject({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message: expect.stringMatching(
          /^Server busy: request bodies being read hold 67108864 bytes/,
        ),
      },
    });
    expect(peakHeld).toBeLessThanOrEqual(MAX_BUFFERED_BODY_BYTES);
    // The server held the budget, not the 525 MB it was sent.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);

    // A client with a small call is served meanwhile.
    const { client } = await connectClient(server.port, 'modern-http');
    cleanups.push(() => client.close());
    const result = await client.callTool({ name: 'echo', arguments: { message: 'still here' } });
    expect(result.isError).toBeFalsy();
  }, 120_000);

  it('a body that never ends is cut by the request timeout, and what it held is given back', async () => {
    const server = await startTestListener({ requestTimeoutMs: 500 });
    cleanups.push(() => server.close());
    const answers = slowBodies(server.port, 1);
    await waitUntil(() => answers.length === 1, 30_000, 'the stalled connection closed');
    expect(answers[0]!.status).toBe(408);
    expect(processBodyBudget.heldBytes).toBe(0);
    expect(server.errors).toEqual([]);
  }, 60_000);
});
