// Request checks in front of every route of Grove's local HTTP servers (each worktree's MCP
// listener, the headless UI/HostApi server): the Host header must name this loopback server on its
// port (DNS rebinding), a browser Origin must be local (absent is fine, `null` and foreign origins
// are not), and the token must be presented as `Authorization: Bearer <token>` or `?token=<token>`
// (a server may accept something else instead, e.g. a live SSE session id on `POST /messages`).
// Every refusal is 403 with a JSON `{ "error": ... }` body: never 401, which sends mcp-remote and
// Claude Code into OAuth discovery. Tokens are compared in constant time and never echoed or logged.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { localhostAllowedOrigins, validateOriginHeader } from '@modelcontextprotocol/server';

const LOOPBACK_HOSTNAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** True when a Host header value is exactly one of this server's loopback names with its port. */
export function isAllowedHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const normalized = host.toLowerCase();
  return LOOPBACK_HOSTNAMES.some((name) => normalized === `${name}:${port}`);
}

/** True for no Origin (non-browser clients) or a localhost-class origin on any port. */
export function isAllowedOrigin(origin: string | undefined): boolean {
  return validateOriginHeader(origin, localhostAllowedOrigins()).ok;
}

/** Constant-time comparison (digests have equal length, so timingSafeEqual never throws). */
export function tokenMatches(presented: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

/** Every token a request presents: the Bearer credential and/or the `token` query parameter. */
export function presentedTokens(req: Request): string[] {
  const tokens: string[] = [];
  const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  if (match?.[1]) tokens.push(match[1].trim());
  const query: unknown = req.query['token'];
  if (typeof query === 'string') tokens.push(query);
  return tokens;
}

export function forbid(res: Response, message: string): void {
  res.status(403).json({ error: message });
}

/** Host and Origin checks (every route). `port` is read per request: it is known after listen. */
export function hostAndOriginGuard(port: () => number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isAllowedHost(req.headers.host, port())) {
      forbid(res, `forbidden: Host ${JSON.stringify(req.headers.host ?? '')} is not this server`);
      return;
    }
    const origin = req.headers.origin;
    if (!isAllowedOrigin(origin)) {
      forbid(res, `forbidden: Origin ${JSON.stringify(origin)} is not allowed`);
      return;
    }
    next();
  };
}

export interface TokenGuardOptions {
  /** The expected token, read per request so a rotated token takes effect at once. */
  token: () => string;
  /** Lets a request through without the token (e.g. a live SSE session id on /messages). */
  acceptsWithoutToken?: (req: Request) => boolean;
}

/** The token check. */
export function tokenGuard(options: TokenGuardOptions): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const tokens = presentedTokens(req);
    const expected = options.token();
    if (
      tokens.some((token) => tokenMatches(token, expected)) ||
      options.acceptsWithoutToken?.(req)
    ) {
      next();
      return;
    }
    forbid(
      res,
      tokens.length === 0
        ? 'forbidden: missing token (send "Authorization: Bearer <token>" or ?token=<token>)'
        : 'forbidden: wrong token',
    );
  };
}
