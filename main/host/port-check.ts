// Whether a port is free for a worktree's server: the host asks before it moves a worktree back to
// the port it lost, so that "Use port N again" while another program still holds N says so
// rather than restarting the server only to see it move away again.
import { createServer } from 'node:net';

/**
 * True when 127.0.0.1:port (where every worktree server listens) can be listened on now; the probe
 * lets go of it again at once.
 */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') resolve(false);
      else reject(error);
    });
    probe.listen({ port, host: '127.0.0.1', exclusive: true }, () =>
      probe.close(() => resolve(true)),
    );
  });
}
