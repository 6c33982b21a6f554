// Reading a JSON request body and writing JSON answers on plain node:http, for the MCP listener
// (which runs in every worktree process and so avoids a web framework's start-up cost). Bodies are
// capped: a Content-Length over the cap is refused before reading, a stream that grows past it is
// cut off. Only UTF-8 and no Content-Encoding are accepted, as MCP clients send them. Nesting is
// capped too (MAX_JSON_DEPTH), checked by a linear scan before parsing: JSON nested 100,000 levels
// deep parses, but everything recursive after it (schema validation, serialising) would overflow
// the stack. What every body being read holds at once is capped as well (BodyBudget): a token
// holder who starts hundreds of 4 MB bodies and never finishes them is refused with 503.
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

/**
 * The bytes of request bodies a process holds while it reads them, across every connection. Each
 * body takes from it as its chunks arrive and gives back once read (or refused, or cut off); a
 * chunk that would take it past `maxBytes` ends that body's reading with 503. Without it, 600
 * unfinished 4 MB bodies took a worktree process from 80 MB to 2.4 GB for the ~300 s Node gave
 * them.
 */
export class BodyBudget {
  readonly maxBytes: number;
  #held = 0;
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes held now by bodies being read. */
  get heldBytes(): number {
    return this.#held;
  }

  /** Takes `bytes` if they fit; false (and nothing taken) if they would pass the cap. */
  take(bytes: number): boolean {
    if (this.#held + bytes > this.maxBytes) return false;
    this.#held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#held = Math.max(0, this.#held - bytes);
  }
}

/**
 * Request bodies a process holds while reading them, every connection together: sixteen bodies at
 * the 4 MiB cap. Clients on the loopback send a body in milliseconds, so what is held at once is
 * what is slow on purpose.
 */
export const MAX_BUFFERED_BODY_BYTES = 64 * 1024 * 1024;

/** The budget every body of the process shares unless told otherwise. */
export const processBodyBudget = new BodyBudget(MAX_BUFFERED_BODY_BYTES);

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
 * parser has it). Rejects with RequestBodyError: 413 over `limit` bytes, 503 when the bodies being
 * read would hold more than `budget` allows (processBodyBudget), 415 for a compressed body or a
 * charset other than UTF-8, 400 (-32700) for text that is not JSON.
 */
export async function readJsonBody(
  req: IncomingMessage,
  limit: number,
  budget: BodyBudget = processBodyBudget,
): Promise<unknown> {
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

  const body = await readCapped(req, limit, budget);
  if (body === 'too-large') throw tooLarge();
  if (body === 'over-budget') {
    throw new RequestBodyError(
      503,
      -32000,
      `Server busy: request bodies being read hold ${budget.maxBytes} bytes, its limit for ` +
        'bodies in flight; send the request again once others have finished',
    );
  }
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
 * The whole body; 'too-large' once it passes `limit` bytes, 'over-budget' once the bodies being
 * read would hold more than `budget` allows. Reading then stops without destroying the socket, so
 * the caller can still answer (the answer closes the connection). What the body took from the
 * budget is given back once it is read, refused, or its request ends early (a closed connection,
 * Node's request timeout).
 */
function readCapped(
  req: IncomingMessage,
  limit: number,
  budget: BodyBudget,
): Promise<Buffer | 'too-large' | 'over-budget'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let taken = 0;
    const giveBack = (): void => {
      budget.give(taken);
      taken = 0;
    };
    const stop = (outcome: 'too-large' | 'over-budget'): void => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      req.pause();
      req.on('error', () => undefined);
      chunks.length = 0;
      giveBack();
      resolve(outcome);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) return stop('too-large');
      if (!budget.take(chunk.length)) return stop('over-budget');
      taken += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      req.off('close', onClose);
      giveBack();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    // The connection broke or closed before the body's end (the client left, or Node's request
    // timeout cut it): a refusal of that request, nothing the server did wrong.
    const onError = (error?: Error): void => {
      chunks.length = 0;
      giveBack();
      const why = error ? ` (${error.message})` : '';
      reject(new RequestBodyError(400, -32600, `the request ended before its body was read${why}`));
    };
    const onClose = (): void => onError();
    req.on('data', onData).once('end', onEnd).once('error', onError).once('close', onClose);
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
