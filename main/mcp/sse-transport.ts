// Grove's own legacy HTTP+SSE server transport (protocol 2024-11-05), implementing the v2 SDK's
// Transport interface: `GET /sse` holds the event stream (first event `endpoint`, with a `retry:`
// line so clients reconnect quickly after a restart, then `: keepalive` comments), and each
// `POST /messages?sessionId=` hands its already-parsed body to handlePostMessage. JSON-RPC batches
// are split (v2's protocol layer rejects arrays); onclose fires exactly once.
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
  #timer: NodeJS.Timeout | undefined;
  #started = false;
  #closed = false;

  constructor(options: SseServerTransportOptions) {
    this.#res = options.res;
    this.#endpoint = options.endpoint;
    this.#keepAliveMs = options.keepAliveMs;
    this.#retryMs = options.retryMs;
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
    if (this.#closed || this.#res.destroyed) return;
    this.#res.write(chunk);
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    if (!this.#res.writableEnded) this.#res.end();
    this.onclose?.();
  }
}
