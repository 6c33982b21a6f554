// Small HTTP pieces of the MCP listener: request targets, the answers it gives when it refuses
// a request (405 with Allow, 415, JSON-RPC errors), route error handling, and the loopback host every server binds.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestBodyError, sendJson } from '../platform/http/json-body.ts';

export const LISTEN_HOST = '127.0.0.1';

/** The path and query of a request target (`/mcp?token=...`). */
export function splitUrl(url: string | undefined): { path: string; query: URLSearchParams } {
  const target = url ?? '/';
  const mark = target.indexOf('?');
  return mark === -1
    ? { path: target, query: new URLSearchParams() }
    : { path: target.slice(0, mark), query: new URLSearchParams(target.slice(mark + 1)) };
}

/**
 * The request line and headers as a web Request, without the body: enough for the SDK to classify
 * a request whose body is passed already parsed, and for tools' request context.
 */
export function headersOnlyRequest(req: IncomingMessage): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(`http://${LISTEN_HOST}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
  });
}

/** Most messages in one JSON-RPC batch (clients send a handful). */
export const MAX_BATCH_MESSAGES = 100;

/** The methods Streamable HTTP uses on /mcp. */
export const MCP_METHODS = ['GET', 'POST', 'DELETE'];

export function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendJson(res, 405, { error: `method not allowed: use ${allow}` }, { Allow: allow });
}

/** 415 for a POST whose body is not JSON (JSON-RPC error -32000, as the SDK answers it). */
export function unsupportedMediaType(res: ServerResponse): void {
  jsonRpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
}

export function jsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}

/** Unreadable bodies become JSON-RPC errors; anything else is a 500 and reported. */
export function handleRouteError(
  error: unknown,
  res: ServerResponse,
  reportError: (error: unknown) => void,
): void {
  if (error instanceof RequestBodyError) {
    // A body refused as too long, or over the budget of bodies in flight, was not read to its
    // end: the connection cannot carry another request.
    const unread = error.status === 413 || error.status === 503;
    const headers: Record<string, string> = unread ? { Connection: 'close' } : {};
    jsonRpcError(res, error.status, error.code, error.message, headers);
    return;
  }
  reportError(error);
  jsonRpcError(res, 500, -32603, 'Internal error');
}
