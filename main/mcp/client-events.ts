// What the MCP listener tells its owner about clients: sessions opening and closing on the legacy
// legs, modern (stateless) clients being seen, and tool calls. The worktree process forwards these
// to the host, whose client registry is the "clients" list of the UI. Plain data, no secrets.

/**
 * The header `grove bridge` puts on every request it forwards (value `1`): the client behind it
 * speaks stdio to the bridge, so the window lists it as a stdio client, not as Streamable HTTP.
 * It says how a client reaches the server, nothing more: it grants nothing.
 */
export const BRIDGE_HEADER = 'x-grove-bridge';

/** True when a request's `x-grove-bridge` header says it came through `grove bridge`. */
export function isBridgedHeader(value: string | string[] | null | undefined): boolean {
  return value === '1';
}

/** The wire transport a client uses. */
export type McpTransportKind = 'sse' | 'streamable-http';

/** The protocol era: `legacy` (2024/2025 `initialize` handshake, sessions) or `modern` (2026-07-28, stateless). */
export type McpEra = 'legacy' | 'modern';

/** A client's self-reported identity (`clientInfo` from `initialize` or the request envelope). */
export interface McpClientIdentity {
  name: string;
  version: string;
}

/** Why a legacy session ended. */
export type SessionCloseReason = 'client' | 'idle' | 'evicted' | 'shutdown';

export type McpClientEvent =
  | {
      type: 'session-opened';
      sessionId: string;
      transport: McpTransportKind;
      era: 'legacy';
      clientInfo?: McpClientIdentity;
      /** The session was opened through `grove bridge` (a stdio client). */
      bridged?: boolean;
      at: number;
    }
  | {
      type: 'session-closed';
      sessionId: string;
      transport: McpTransportKind;
      era: 'legacy';
      clientInfo?: McpClientIdentity;
      reason: SessionCloseReason;
      at: number;
    }
  | {
      /** A Streamable HTTP session's GET stream opened or closed (a client listening for messages). */
      type: 'session-stream';
      sessionId: string;
      open: boolean;
      at: number;
    }
  | {
      /** A modern client made a request (modern clients hold no session: show them as "recently seen"). */
      type: 'client-seen';
      transport: 'streamable-http';
      era: 'modern';
      clientInfo?: McpClientIdentity;
      /** The request came through `grove bridge` (a stdio client). */
      bridged?: boolean;
      method: string;
      at: number;
    }
  | {
      /** A tool call began (it shows as running until its `tool-called`). */
      type: 'tool-started';
      callId: string;
      tool: string;
      transport: McpTransportKind;
      era: McpEra;
      sessionId?: string;
      clientInfo?: McpClientIdentity;
      /** A modern request that came through `grove bridge` (legacy calls take it from their session). */
      bridged?: boolean;
      argumentsSummary: string;
      at: number;
    }
  | {
      type: 'tool-called';
      callId: string;
      tool: string;
      transport: McpTransportKind;
      era: McpEra;
      sessionId?: string;
      clientInfo?: McpClientIdentity;
      /** A modern request that came through `grove bridge` (legacy calls take it from their session). */
      bridged?: boolean;
      isError: boolean;
      durationMs: number;
      /** Compact JSON of the arguments, cut short. */
      argumentsSummary: string;
      resultBytes: number;
      /** The message of a failed call. */
      error?: string;
      at: number;
    };

/** The longest clientInfo name or version kept, in UTF-16 code units; longer ones are cut. */
export const MAX_CLIENT_INFO_CHARS = 100;

/**
 * Reads a `{ name, version }` identity out of an untrusted value, or undefined. The one reader of
 * clientInfo for both eras (`initialize` of a legacy session, the envelope of a modern request):
 * both fields are cut to MAX_CLIENT_INFO_CHARS, ending in "…", since a client chooses them freely
 * and they are kept, listed and sent to the window.
 */
export function toClientIdentity(value: unknown): McpClientIdentity | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const { name, version } = value as { name?: unknown; version?: unknown };
  if (typeof name !== 'string') return undefined;
  return {
    name: capClientText(name),
    version: typeof version === 'string' ? capClientText(version) : '',
  };
}

/** `text` cut to MAX_CLIENT_INFO_CHARS with an ellipsis, never splitting a surrogate pair. */
function capClientText(text: string): string {
  if (text.length <= MAX_CLIENT_INFO_CHARS) return text;
  let end = MAX_CLIENT_INFO_CHARS - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose pair would be cut off
  return `${text.slice(0, end)}…`;
}
