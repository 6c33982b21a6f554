// The headless HostApi server of `grove serve`: serves the built renderer and the HostApi over
// HTTP on 127.0.0.1 — commands as POST /api/<command>, events as an SSE stream at /api/events —
// protected like the MCP servers (Host allow-list, Origin check, token).
import express from 'express';
import type { Request, Response, NextFunction } from 'express';
import { createServer, type Server } from 'node:http';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostEvent } from '../../shared/host-api.ts';
import { runHostCommand } from '../host/host-commands.ts';
import type { Host } from '../host/host.ts';
import { UserError } from '../platform/errors.ts';
import { isJsonMediaType, readJsonBody, RequestBodyError } from '../platform/http/json-body.ts';
import { hostAndOriginGuard, tokenGuard } from '../platform/http/request-guard.ts';

/** Where `electron-vite build` puts the renderer. */
export const RENDERER_DIR = fileURLToPath(new URL('../../out/renderer/', import.meta.url));

const KEEPALIVE_MS = 15_000;
/** Largest HostApi command body (a chat message, a config). */
const API_BODY_BYTES = 1024 * 1024;

export interface UiServer {
  port: number;
  /** The URL to open in a browser (carries the token). */
  url: string;
  close(): Promise<void>;
}

export interface UiServerOptions {
  host: Host;
  port: number;
  token: string;
  /** Directory of the built renderer; defaults to out/renderer. */
  rendererDir?: string;
}

export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const rendererDir = options.rendererDir ?? RENDERER_DIR;
  try {
    await access(path.join(rendererDir, 'index.html'));
  } catch {
    throw new Error(`the UI is not built (no ${rendererDir}index.html): run \`npm run build\``);
  }

  const app = express();
  app.disable('x-powered-by');
  const streams = new Set<Response>();
  let port = options.port;

  // Static files are the public renderer bundle; the API needs the token.
  app.use(hostAndOriginGuard(() => port));
  app.use('/api', tokenGuard({ token: () => options.token }));
  // The one JSON body reader of Grove's servers (size, charset and nesting caps), and only the
  // methods the API and the static files use.
  app.use((req, res, next) => {
    const allowed =
      req.path.startsWith('/api/') && req.path !== '/api/events' ? 'POST' : 'GET, HEAD';
    if (allowed.split(', ').includes(req.method)) return next();
    res.setHeader('Allow', allowed);
    res.status(405).json({ error: `method not allowed: use ${allowed}` });
  });
  app.use('/api', (req, res, next) => {
    if (req.method !== 'POST') return next();
    if (!isJsonMediaType(req.headers['content-type'])) {
      res.status(415).json({ error: 'send the command as application/json' });
      return;
    }
    readJsonBody(req, API_BODY_BYTES).then(
      (body) => {
        req.body = body;
        next();
      },
      (error: unknown) => {
        if (error instanceof RequestBodyError) {
          res.status(error.status).json({ error: error.message });
        } else {
          next(error);
        }
      },
    );
  });

  app.get('/api/events', (req, res) => {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
    });
    res.write('retry: 1000\n\n');
    const send = (event: HostEvent): void => {
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    };
    const unsubscribe = options.host.onEvent(send);
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    streams.add(res);
    req.on('close', () => {
      clearInterval(keepalive);
      unsubscribe();
      streams.delete(res);
    });
  });

  app.post('/api/:command', async (req, res) => {
    try {
      res.json(await runHostCommand(options.host, req.params.command, req.body));
    } catch (error) {
      // A UserError is the user's to fix (400, with its code); anything else is Grove's fault.
      if (error instanceof UserError) {
        res.status(400).json({ error: error.message, code: error.code });
      } else {
        options.host.log.error(`HostApi command ${req.params.command} failed`, {
          error: String(error),
        });
        res.status(500).json({ error: (error as Error).message });
      }
    }
  });

  app.use(express.static(rendererDir, { index: 'index.html' }));

  app.use(
    (error: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
      res.status(error.status ?? 500).json({ error: error.message });
    },
  );

  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : options.port;

  return {
    port,
    url: `http://127.0.0.1:${port}/?token=${encodeURIComponent(options.token)}`,
    close: async () => {
      for (const stream of streams) stream.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
