// Express middleware guarding Grove's local HTTP servers against other websites and local
// programs: the Host header must name this loopback server (DNS rebinding), a browser Origin must
// be local, and the token must be presented as `Authorization: Bearer` or `?token=`. Refusals are
// 403 with a JSON message — never 401, which sends MCP clients into OAuth discovery.
import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export interface RequestGuardOptions {
  /** The port this server listens on (a function: it is known only after listen). */
  port: () => number;
  token: string;
  /** When false, only Host and Origin are checked. */
  tokenRequired: boolean;
}

const LOCAL_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True when `host` (a Host header value) names this loopback server. */
export function isAllowedHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const separator = host.lastIndexOf(':');
  if (separator === -1) return false;
  return (
    LOCAL_HOSTNAMES.has(host.slice(0, separator)) && host.slice(separator + 1) === String(port)
  );
}

/** True when there is no Origin (non-browser client) or it is a loopback http origin. */
export function isAllowedOrigin(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (
      url.protocol === 'http:' &&
      LOCAL_HOSTNAMES.has(url.hostname === '::1' ? '[::1]' : url.hostname)
    );
  } catch {
    return false; // includes "null" (sandboxed iframes, file://)
  }
}

/** Constant-time token comparison. */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request presents, from `Authorization: Bearer` or the `token` query parameter. */
export function presentedToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith('Bearer ')) return header.slice('Bearer '.length).trim();
  const query = req.query.token;
  return typeof query === 'string' ? query : undefined;
}

export function requestGuard(options: RequestGuardOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!isAllowedHost(req.headers.host, options.port())) {
      res.status(403).json({
        error: `forbidden: Host header ${JSON.stringify(req.headers.host ?? '')} is not this local server`,
      });
      return;
    }
    if (!isAllowedOrigin(req.headers.origin)) {
      res.status(403).json({ error: `forbidden: Origin ${req.headers.origin} is not allowed` });
      return;
    }
    if (options.tokenRequired && !tokenMatches(presentedToken(req), options.token)) {
      const reason = presentedToken(req) === undefined ? 'missing token' : 'wrong token';
      res.status(403).json({
        error: `forbidden: ${reason} (send "Authorization: Bearer <token>" or ?token=<token>)`,
      });
      return;
    }
    next();
  };
}
