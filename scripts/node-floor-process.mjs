// The floor under a worktree process, for `npm run bench:server`: a Node process forked with an
// IPC channel that, on the host's `start` message, listens on 127.0.0.1 and answers `listening`
// — what every worktree process does before any MCP code. Its start time and idle memory bound
// what a worktree process can reach on this Node. Plain JavaScript: a .ts file would load Node's
// type stripper, which a worktree process (a bundle) does not. node:http is required, not
// imported, as the worktree process does (main/mcp/mcp-listener.ts): an ESM import of it loads
// undici, 12 MB the floor would otherwise count.
import { createRequire } from 'node:module';

const { createServer } = createRequire(import.meta.url)('node:http');

process.on('message', (message) => {
  if (message.type === 'shutdown') process.exit(0);
  if (message.type !== 'start') return;
  const server = createServer((_req, res) => res.end());
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ type: 'listening', port: typeof address === 'object' ? address?.port : 0 });
  });
});
process.on('disconnect', () => process.exit(0));
