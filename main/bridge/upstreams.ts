// The two places `grove bridge` sends its client's messages to, as bridge.ts sees them: the running
// host's server for the worktree (host-upstream.ts) or a server of the worktree's own in the
// bridge's process (local-upstream.ts, loaded only when used: it brings the engine). Both pass
// JSON-RPC messages through untouched; bridge.ts decides which one is in use and switches when one
// is lost.
import type { JSONRPCMessage } from './json-rpc.ts';

export interface Upstream {
  /** For messages: "the Grove host (http://127.0.0.1:47110/mcp)" or "this process". */
  readonly description: string;
  readonly kind: 'host' | 'local';
  /**
   * Resolves once the upstream has the message. Rejects with UpstreamLost when the upstream is
   * gone; any other rejection is about this message only (the upstream refused it, and said why).
   */
  send(message: JSONRPCMessage): Promise<void>;
  /** Ends the session; waits for the upstream at most briefly (the client is waiting for the exit). */
  close(): Promise<void>;
}

export interface UpstreamHandlers {
  /** A message for the client; `text`: that message as the upstream wrote it (JSON), if known. */
  onmessage(message: JSONRPCMessage, text?: string): void;
  /** The upstream is gone (its server stopped answering): requests in flight will get no answer. */
  onlost(reason: string): void;
}

/**
 * The upstream is gone. `delivered` is false when the message certainly never reached a server
 * (no HTTP response at all, or a session the server no longer knows): it may be sent again elsewhere.
 */
export class UpstreamLost extends Error {
  readonly delivered: boolean;
  constructor(message: string, delivered: boolean, cause?: unknown) {
    super(message, { cause });
    this.name = 'UpstreamLost';
    this.delivered = delivered;
  }
}
