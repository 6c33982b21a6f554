// The live sessions of the two legacy legs (SSE and sessionful Streamable HTTP), keyed by session
// id: lookup, activity tracking, idle reaping and a cap on their number (the least recently active
// session is evicted to make room; its client re-initializes). The modern leg holds no sessions.
import type { McpClientIdentity, McpTransportKind, SessionCloseReason } from './client-events.ts';

export interface LegacySession {
  readonly id: string;
  readonly transport: McpTransportKind;
  /** Set from the client's `initialize` request. */
  clientInfo?: McpClientIdentity;
  /** Opened through `grove bridge` (its initialize carried BRIDGE_HEADER). */
  bridged?: boolean;
  /** Milliseconds timestamp (performance clock) of the last message from the client. */
  lastActivity: number;
  /** Why Grove ended it; unset when the client ended it. */
  closeReason?: SessionCloseReason;
  /** True while something keeps the session alive regardless of idleness (an open SSE stream). */
  isHeld(): boolean;
  /** Ends the session: stream, transport and server. Removal happens through `remove`. */
  close(): Promise<void>;
}

export interface LegacySessionRegistryOptions {
  maxSessions: number;
  idleMs: number;
  now?: () => number;
}

export class LegacySessionRegistry<S extends LegacySession = LegacySession> {
  readonly #sessions = new Map<string, S>();
  readonly #maxSessions: number;
  readonly #idleMs: number;
  readonly #now: () => number;

  constructor(options: LegacySessionRegistryOptions) {
    this.#maxSessions = Math.max(1, options.maxSessions);
    this.#idleMs = options.idleMs;
    this.#now = options.now ?? (() => performance.now());
  }

  get size(): number {
    return this.#sessions.size;
  }

  now(): number {
    return this.#now();
  }

  get(id: string): S | undefined {
    return this.#sessions.get(id);
  }

  /** Records client activity; returns the session when it exists. */
  touch(id: string): S | undefined {
    const session = this.#sessions.get(id);
    if (session) session.lastActivity = this.#now();
    return session;
  }

  /** Adds a session, evicting the least recently active ones when the cap is reached. */
  async add(session: S): Promise<void> {
    const evicted: S[] = [];
    while (this.#sessions.size >= this.#maxSessions) {
      const oldest = this.#leastRecentlyActive();
      if (!oldest) break;
      this.#sessions.delete(oldest.id);
      oldest.closeReason ??= 'evicted';
      evicted.push(oldest);
    }
    this.#sessions.set(session.id, session);
    await Promise.allSettled(evicted.map((old) => old.close()));
  }

  /** Forgets a session (called from its close path). Returns it if it was registered. */
  remove(id: string): S | undefined {
    const session = this.#sessions.get(id);
    this.#sessions.delete(id);
    return session;
  }

  /** Closes every session idle for longer than idleMs and not held open. */
  async reapIdle(): Promise<void> {
    const cutoff = this.#now() - this.#idleMs;
    const idle = [...this.#sessions.values()].filter(
      (session) => session.lastActivity < cutoff && !session.isHeld(),
    );
    for (const session of idle) {
      session.closeReason ??= 'idle';
      this.#sessions.delete(session.id);
    }
    await Promise.allSettled(idle.map((session) => session.close()));
  }

  /** Closes every session (listener shutdown). */
  async closeAll(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    for (const session of all) session.closeReason ??= 'shutdown';
    await Promise.allSettled(all.map((session) => session.close()));
  }

  #leastRecentlyActive(): S | undefined {
    let oldest: S | undefined;
    for (const session of this.#sessions.values()) {
      if (!oldest || session.lastActivity < oldest.lastActivity) oldest = session;
    }
    return oldest;
  }
}
