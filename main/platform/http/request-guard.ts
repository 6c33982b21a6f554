// Request checks in front of every route of Grove's local HTTP servers (each worktree's MCP
// listener, the headless UI/HostApi server): the Host header must name this loopback server on its
// port (DNS rebinding), a browser Origin must be local (absent is fine, `null` and foreign origins
// are not), and the token must be presented as `Authorization: Bearer <token>` or `?token=<token>`
// (a server may accept something else instead, e.g. a live SSE session id on `POST /messages`).
// Every refusal is 403 with a JSON `{ "error": ... }` body: never 401, which sends mcp-remote and
// Claude Code into OAuth discovery. Tokens are compared in constant time and never echoed or logged.
import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { nodeCrypto } from '../builtins.ts';

/**
 * The loopback names a Host or Origin may carry: the SDK's `localhostAllowedHostnames()`. Written
 * out here rather than imported: the SDK's entry module builds hundreds of zod schemas as it
 * loads, and a worktree process no client called must not pay for that (docs/performance.md).
 */
const LOOPBACK_HOSTNAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** True when a Host header value is exactly one of this server's loopback names with its port. */
export function isAllowedHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const normalized = host.toLowerCase();
  return LOOPBACK_HOSTNAMES.some((name) => normalized === `${name}:${port}`);
}

/**
 * True for no Origin (non-browser clients) or a localhost-class origin on any port; anything that
 * does not parse as a URL with a host (`null`, `file://`) is refused. The SDK's
 * `validateOriginHeader(origin, localhostAllowedOrigins())` rule, which mcp-security.test.ts
 * checks this against.
 */
export function isAllowedOrigin(origin: string | undefined): boolean {
  if (origin === undefined || origin === '') return true;
  const hostname = URL.parse(origin)?.hostname;
  return hostname !== undefined && LOOPBACK_HOSTNAMES.includes(hostname);
}

const digest = (value: string): Buffer =>
  nodeCrypto().createHash('sha256').update(value, 'utf8').digest();

/** The expected token's digest, kept while the token stays the same (it is asked per request). */
let expectedDigest: { token: string; digest: Buffer } | undefined;

/** Constant-time comparison (digests have equal length, so timingSafeEqual never throws). */
export function tokenMatches(presented: string, expected: string): boolean {
  if (expectedDigest?.token !== expected)
    expectedDigest = { token: expected, digest: digest(expected) };
  return nodeCrypto().timingSafeEqual(digest(presented), expectedDigest.digest);
}

/** Every token a request presents: the Bearer credential and/or the `token` query parameter. */
export function presentedTokens(
  authorization: string | undefined,
  queryToken: string | null | undefined,
): string[] {
  const tokens: string[] = [];
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
  if (match?.[1]) tokens.push(match[1].trim());
  if (typeof queryToken === 'string') tokens.push(queryToken);
  return tokens;
}

/** Why a request's Host or Origin is refused, or undefined when both are fine. */
export function hostOrOriginRefusal(
  headers: IncomingHttpHeaders,
  port: number,
): string | undefined {
  if (!isAllowedHost(headers.host, port)) {
    return `forbidden: Host ${JSON.stringify(headers.host ?? '')} is not this server`;
  }
  if (!isAllowedOrigin(headers.origin)) {
    return `forbidden: Origin ${JSON.stringify(headers.origin)} is not allowed`;
  }
  return undefined;
}

/** Why the presented tokens are refused, or undefined when one matches. */
export function tokenRefusal(presented: readonly string[], expected: string): string | undefined {
  if (presented.some((token) => tokenMatches(token, expected))) return undefined;
  return presented.length === 0
    ? 'forbidden: missing token (send "Authorization: Bearer <token>" or ?token=<token>)'
    : 'forbidden: wrong token';
}

// Express middleware for the headless UI server (the MCP listener uses the functions above).

function forbid(res: Response, message: string): void {
  res.status(403).json({ error: message });
}

/** Host and Origin checks (every route). `port` is read per request: it is known after listen. */
export function hostAndOriginGuard(port: () => number): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const refusal = hostOrOriginRefusal(req.headers, port());
    if (refusal === undefined) next();
    else forbid(res, refusal);
  };
}

/** The token check; `token` is read per request so a rotated token takes effect at once. */
export function tokenGuard(options: { token: () => string }): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const query: unknown = req.query['token'];
    const presented = presentedTokens(
      req.headers.authorization,
      typeof query === 'string' ? query : undefined,
    );
    const refusal = tokenRefusal(presented, options.token());
    if (refusal === undefined) next();
    else forbid(res, refusal);
  };
}
