// Reading a JSON request body and writing JSON answers on plain node:http, for the MCP listener
// (which runs in every worktree process and so avoids a web framework's start-up cost). Bodies are
// capped: a Content-Length over the cap is refused before reading, a stream that grows past it is
// cut off. Only UTF-8 and no Content-Encoding are accepted, as MCP clients send them. Nesting is
// capped too (MAX_JSON_DEPTH), checked by a linear scan before parsing: JSON nested 100,000 levels
// deep parses, but everything recursive after it (schema validation, serialising) would overflow
// the stack.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A body that cannot be accepted, with the HTTP status and JSON-RPC code to answer it with. */
export class RequestBodyError extends Error {
  readonly status: number;
  readonly code: number;

  constructor(status: number, code: number, message: string) {
    super(message);
    this.name = 'RequestBodyError';
    this.status = status;
    this.code = code;
  }
}

/** Deepest nesting of arrays and objects accepted in a request body (MCP messages need a few). */
export const MAX_JSON_DEPTH = 64;

/** True if `text` nests arrays/objects deeper than `limit` (strings are skipped; linear time). */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index++; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** True when a Content-Type names JSON (`application/json`, any parameters, any case). */
export function isJsonMediaType(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
}

/**
 * Reads and parses the body of a JSON request. An empty body reads as `{}` (as Express's JSON
 * parser has it). Rejects with RequestBodyError: 413 over `limit` bytes, 415 for a compressed body
 * or a charset other than UTF-8, 400 (-32700) for text that is not JSON.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const tooLarge = (): RequestBodyError =>
    new RequestBodyError(413, -32600, `Request body exceeds ${limit} bytes`);
  const encoding = req.headers['content-encoding']?.toLowerCase();
  if (encoding !== undefined && encoding !== 'identity') {
    throw new RequestBodyError(415, -32000, `Unsupported Content-Encoding: ${encoding}`);
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new RequestBodyError(415, -32000, `Unsupported charset: ${charset} (use utf-8)`);
  }
  if (Number(req.headers['content-length'] ?? 0) > limit) throw tooLarge();

  const body = await readCapped(req, limit);
  if (body === undefined) throw tooLarge();
  const text = body.toString('utf8');
  if (text.trim() === '') return {};
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new RequestBodyError(
      400,
      -32700,
      `Parse error: JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RequestBodyError(400, -32700, 'Parse error: body is not valid JSON');
  }
}

/**
 * The whole body, or undefined once it passes `limit` bytes: reading then stops without
 * destroying the socket, so the caller can still answer 413 (the answer closes the connection).
 */
function readCapped(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData).off('end', onEnd).off('error', reject).pause();
      req.on('error', () => undefined);
      resolve(undefined);
    };
    const onEnd = (): void => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    req.on('data', onData).once('end', onEnd).once('error', reject);
  });
}

/** Answers with a JSON body (unless the response has already started). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}
