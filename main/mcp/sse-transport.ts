// Grove's own legacy HTTP+SSE server transport (protocol 2024-11-05), implementing the v2 SDK's
// Transport interface: `GET /sse` holds the event stream (first event `endpoint`, with a `retry:`
// line so clients reconnect quickly after a restart, then `: keepalive` comments), and each
// `POST /messages?sessionId=` hands its already-parsed body to handlePostMessage. JSON-RPC batches
// are split (v2's protocol layer rejects arrays); onclose fires exactly once. A stream whose client
// stops reading is ended once its unread output passes maxBacklogBytes, so it never holds more.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { parseJSONRPCMessage } from '@modelcontextprotocol/server';
import type {
  JSONRPCMessage,
  MessageExtraInfo,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server';

export interface SseServerTransportOptions {
  /** The response that becomes the event stream. */
  res: ServerResponse;
  /** Path clients POST messages to; `?sessionId=<id>` is appended. */
  endpoint: string;
  /** Interval between `: keepalive` comments; 0 disables them. */
  keepAliveMs: number;
  /** Reconnection delay suggested to clients in the first frame. */
  retryMs: number;
  /**
   * Unread output (written but not yet taken by the socket) past which the stream is cut and the
   * session ends (default MAX_SSE_BACKLOG_BYTES).
   */
  maxBacklogBytes?: number;
  /** The total cap shared with other streams (default: the process's, MAX_SSE_TOTAL_BACKLOG_BYTES). */
  backlogBudget?: SseBacklogBudget;
}

/**
 * Unread output one SSE stream may hold. A client that reads keeps this near zero (the socket
 * takes each frame); the biggest single answer is a few MiB (a 4 MiB read_multiple_files, as JSON
 * text and structuredContent), so 32 MiB holds several of them for a slow reader and cuts off a
 * client that stopped reading before its answers pile up.
 */
export const MAX_SSE_BACKLOG_BYTES = 32 * 1024 * 1024;

/** Unread output every SSE stream of the process may hold together (many sessions, none read). */
export const MAX_SSE_TOTAL_BACKLOG_BYTES = 128 * 1024 * 1024;

/**
 * The streams that share a total cap on unread output: once their backlogs add up past
 * `maxTotalBytes`, the stream holding the most is cut (the one that stopped reading).
 */
export class SseBacklogBudget {
  readonly #streams = new Set<{ backlog(): number; cut(): void }>();
  readonly maxTotalBytes: number;
  constructor(maxTotalBytes: number) {
    this.maxTotalBytes = maxTotalBytes;
  }

  add(stream: { backlog(): number; cut(): void }): () => void {
    this.#streams.add(stream);
    return () => this.#streams.delete(stream);
  }

  /** Cuts the largest backlogs until the total is within the cap. */
  enforce(): void {
    for (;;) {
      let total = 0;
      let largest: { backlog(): number; cut(): void } | undefined;
      for (const stream of this.#streams) {
        const backlog = stream.backlog();
        total += backlog;
        if (!largest || backlog > largest.backlog()) largest = stream;
      }
      if (total <= this.maxTotalBytes || !largest) return;
      this.#streams.delete(largest);
      largest.cut();
    }
  }
}

/** The budget every SSE stream of the process shares unless told otherwise. */
const processBacklog = new SseBacklogBudget(MAX_SSE_TOTAL_BACKLOG_BYTES);

/**
 * Bounds what a response holds for a client that stops reading: the SSE transport's stream, and
 * each Streamable HTTP response (mcp-routes.ts). Destroying drops what the client never took
 * (end() would keep it to flush); the client sees its stream cut and can open a new one. The SDK's
 * Node adapter waits for 'drain' before writing more, and
 * meanwhile queues answers inside the response's web stream, unbounded and out of sight; here
 * every write reports success, so what the client has not taken stays in the response's own
 * buffer (`writableLength`), where the caps see it: past `maxBytes` (or the largest, once all
 * streams of the budget pass its total) the response is destroyed and the client sees it cut.
 */
export function capUnreadOutput(
  res: ServerResponse,
  options: { maxBytes?: number | undefined; budget?: SseBacklogBudget | undefined } = {},
): void {
  const maxBytes = options.maxBytes ?? MAX_SSE_BACKLOG_BYTES;
  const budget = options.budget ?? processBacklog;
  const cut = (): void => {
    leave();
    res.destroy();
  };
  const leave = budget.add({
    backlog: () => (res.destroyed ? 0 : res.writableLength),
    cut,
  });
  res.once('close', leave);
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.write = ((...args: unknown[]) => {
    write(...args);
    if (res.writableLength > maxBytes) cut();
    else budget.enforce();
    return true;
  }) as typeof res.write;
}

/** A POST body that is not a JSON-RPC message (or a non-empty array of them). */
export class InvalidMessageError extends Error {
  override name = 'InvalidMessageError';
}

export class SseServerTransport implements Transport {
  readonly sessionId: string = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  readonly #res: ServerResponse;
  readonly #endpoint: string;
  readonly #keepAliveMs: number;
  readonly #retryMs: number;
  readonly #maxBacklogBytes: number | undefined;
  readonly #budget: SseBacklogBudget | undefined;
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #closed = false;

  constructor(options: SseServerTransportOptions) {
    this.#res = options.res;
    this.#endpoint = options.endpoint;
    this.#keepAliveMs = options.keepAliveMs;
    this.#retryMs = options.retryMs;
    this.#maxBacklogBytes = options.maxBacklogBytes;
    this.#budget = options.backlogBudget;
  }

  /** True while the event stream is open. */
  get isOpen(): boolean {
    return this.#started && !this.#closed;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('SseServerTransport already started');
    this.#started = true;
    const res = this.#res;
    res.on('close', () => this.#finish());
    res.on('error', (error) => this.onerror?.(error));
    if (res.destroyed) {
      this.#finish();
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    // A client that stops reading has its stream cut (the 'close' above ends the session).
    capUnreadOutput(res, { maxBytes: this.#maxBacklogBytes, budget: this.#budget });
    const url = `${this.#endpoint}?sessionId=${encodeURIComponent(this.sessionId)}`;
    this.#write(`retry: ${this.#retryMs}\nevent: endpoint\ndata: ${url}\n\n`);
    if (this.#keepAliveMs > 0) {
      this.#timer = setInterval(() => this.#write(': keepalive\n\n'), this.#keepAliveMs);
      this.#timer.unref();
    }
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    if (!this.isOpen) throw new Error('SSE stream is not open');
    this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /**
   * Delivers one POSTed body (already parsed JSON): a message or a batch array. Everything is
   * validated before anything is delivered; throws InvalidMessageError on a malformed body.
   */
  handlePostMessage(body: unknown, extra?: MessageExtraInfo): void {
    if (!this.isOpen) throw new Error('SSE stream is not open');
    const items = Array.isArray(body) ? body : [body];
    if (items.length === 0) throw new InvalidMessageError('empty JSON-RPC batch');
    const messages = items.map((item: unknown) => {
      try {
        return parseJSONRPCMessage(item);
      } catch {
        throw new InvalidMessageError('not a JSON-RPC 2.0 message');
      }
    });
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async close(): Promise<void> {
    this.#finish();
  }

  #write(chunk: string): void {
    const res = this.#res;
    if (this.#closed || res.destroyed) return;
    res.write(chunk);
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    if (!this.#res.writableEnded && !this.#res.destroyed) this.#res.end();
    this.onclose?.();
  }
}
