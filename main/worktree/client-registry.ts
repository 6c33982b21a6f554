// The client registry of one worktree's server: turns the MCP listener's client events into the
// "Clients" list (open sessions, recently closed ones, modern clients seen recently) and the
// activity log, and hands both to the host in batches (at most one message per flush interval),
// so a burst of calls costs the host a handful of messages, not one per call.
import type { McpClientEvent, McpClientIdentity } from '../mcp/client-events.ts';
import type { ActivityEntry, ClientInfo, RunningCall } from '../../shared/model.ts';

export interface ClientRegistryOptions {
  onClients(clients: ClientInfo[]): void;
  onActivity(entries: ActivityEntry[]): void;
  /** The calls running now (sent, batched, whenever the set changes). */
  onRunningCalls?(calls: RunningCall[]): void;
  /** Batching interval (default 200 ms). */
  flushMs?: number;
  /** Closed sessions kept in the list (default 20, most recent). */
  maxClosed?: number;
  /** Modern clients not seen for this long drop off the list (default 10 min). */
  modernTtlMs?: number;
  /**
   * Modern clients kept (default 50): a new one evicts the least recently seen. Legacy sessions
   * need no cap here: the listener caps the live ones (DEFAULT_MAX_SESSIONS) and `maxClosed` the
   * closed ones.
   */
  maxModern?: number;
}

const UNKNOWN: McpClientIdentity = { name: 'unknown client', version: '' };

export class ClientRegistry {
  private readonly options: Required<Omit<ClientRegistryOptions, 'onRunningCalls'>> &
    Pick<ClientRegistryOptions, 'onRunningCalls'>;
  private readonly clients = new Map<string, ClientInfo>();
  private readonly running = new Map<string, RunningCall>();
  private runningDirty = false;
  private pendingActivity: ActivityEntry[] = [];
  private clientsDirty = false;
  /** The list last sent to `onClients`, serialized: a flush that would resend it sends nothing. */
  private lastSentClients: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sequence = 0;

  constructor(options: ClientRegistryOptions) {
    this.options = {
      flushMs: 200,
      maxClosed: 20,
      modernTtlMs: 10 * 60_000,
      maxModern: 50,
      ...options,
    };
  }

  handle(event: McpClientEvent): void {
    switch (event.type) {
      case 'session-opened': {
        const identity = event.clientInfo ?? UNKNOWN;
        this.clients.set(event.sessionId, {
          id: event.sessionId,
          name: identity.name,
          version: identity.version,
          transport: event.transport,
          era: 'legacy',
          connection: 'open',
          // An SSE session is its stream; a Streamable HTTP session opens one with GET.
          streamOpen: event.transport === 'sse',
          firstSeenAt: event.at,
          lastActivityAt: event.at,
          calls: 0,
        });
        break;
      }
      case 'session-closed': {
        const client = this.clients.get(event.sessionId);
        if (!client) return;
        client.connection = 'closed';
        client.streamOpen = false;
        client.lastActivityAt = Math.max(client.lastActivityAt, event.at);
        break;
      }
      case 'session-stream': {
        const client = this.clients.get(event.sessionId);
        if (!client || client.connection === 'closed') return;
        client.streamOpen = event.open;
        client.lastActivityAt = Math.max(client.lastActivityAt, event.at);
        break;
      }
      case 'client-seen':
        this.touchModern(event.clientInfo ?? UNKNOWN, event.at);
        break;
      case 'tool-started': {
        const client = this.clientOf(event);
        this.running.set(event.callId, {
          id: event.callId,
          startedAt: event.at,
          clientId: client?.id ?? null,
          clientName: client?.name ?? event.clientInfo?.name ?? UNKNOWN.name,
          tool: event.tool,
          argumentsSummary: event.argumentsSummary,
        });
        this.runningDirty = true;
        break;
      }
      case 'tool-called': {
        if (this.running.delete(event.callId)) this.runningDirty = true;
        const client = this.clientOf(event);
        if (client) {
          client.calls++;
          client.lastActivityAt = event.at;
        }
        this.pendingActivity.push({
          id: `${process.pid}-${++this.sequence}`,
          at: event.at - Math.round(event.durationMs),
          clientId: client?.id ?? null,
          clientName: client?.name ?? event.clientInfo?.name ?? UNKNOWN.name,
          tool: event.tool,
          argumentsSummary: event.argumentsSummary,
          durationMs: Math.round(event.durationMs * 10) / 10,
          resultBytes: event.resultBytes,
          ok: !event.isError,
          error: event.error ?? null,
        });
        break;
      }
    }
    this.clientsDirty = true;
    this.schedule();
  }

  /** The client a call belongs to (a modern one is seen again by it). */
  private clientOf(event: {
    era: 'legacy' | 'modern';
    sessionId?: string;
    clientInfo?: McpClientIdentity;
    at: number;
  }): ClientInfo | undefined {
    if (event.era === 'modern') return this.touchModern(event.clientInfo ?? UNKNOWN, event.at);
    return event.sessionId === undefined ? undefined : this.clients.get(event.sessionId);
  }

  /** The current list: open sessions and modern clients first, then recently closed sessions. */
  list(now = Date.now()): ClientInfo[] {
    const all = [...this.clients.values()];
    for (const client of all) {
      if (
        client.connection === 'stateless' &&
        now - client.lastActivityAt > this.options.modernTtlMs
      ) {
        this.clients.delete(client.id);
      }
    }
    const closed = all
      .filter((client) => client.connection === 'closed')
      .sort((a, b) => b.lastActivityAt - a.lastActivityAt);
    for (const old of closed.slice(this.options.maxClosed)) this.clients.delete(old.id);
    return [...this.clients.values()]
      .sort((a, b) => rank(a) - rank(b) || a.firstSeenAt - b.firstSeenAt)
      .map((client) => ({ ...client }));
  }

  /** Sends whatever is pending now (used before shutdown). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.clientsDirty) {
      this.clientsDirty = false;
      const list = this.list();
      const serialized = JSON.stringify(list);
      if (serialized !== this.lastSentClients) {
        this.lastSentClients = serialized;
        this.options.onClients(list);
      }
    }
    if (this.pendingActivity.length > 0) {
      const entries = this.pendingActivity;
      this.pendingActivity = [];
      this.options.onActivity(entries);
    }
    if (this.runningDirty) {
      this.runningDirty = false;
      this.options.onRunningCalls?.([...this.running.values()]);
    }
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => this.flush(), this.options.flushMs);
  }

  private touchModern(identity: McpClientIdentity, at: number): ClientInfo {
    const id = `modern:${identity.name}@${identity.version}`;
    let client = this.clients.get(id);
    if (!client) {
      this.evictModern(Math.max(1, this.options.maxModern) - 1);
      client = {
        id,
        name: identity.name,
        version: identity.version,
        transport: 'streamable-http',
        era: 'modern',
        connection: 'stateless',
        streamOpen: false,
        firstSeenAt: at,
        lastActivityAt: at,
        calls: 0,
      };
      this.clients.set(id, client);
    }
    client.lastActivityAt = Math.max(client.lastActivityAt, at);
    return client;
  }

  /** Drops the least recently seen modern clients until at most `keep` are left. */
  private evictModern(keep: number): void {
    const modern = [...this.clients.values()].filter((c) => c.connection === 'stateless');
    if (modern.length <= keep) return;
    modern.sort((a, b) => a.lastActivityAt - b.lastActivityAt);
    for (const old of modern.slice(0, modern.length - Math.max(0, keep))) {
      this.clients.delete(old.id);
    }
  }
}

function rank(client: ClientInfo): number {
  return client.connection === 'closed' ? 1 : 0;
}
