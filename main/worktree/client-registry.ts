// The client registry of one worktree's server: turns the MCP listener's client events into the
// "Clients" list (open sessions, recently closed ones, modern clients seen recently) and the
// activity log, and hands both to the host in batches (at most one message per flush interval),
// so a burst of calls costs the host a handful of messages, not one per call. It keeps the list
// truthful: a client behind `grove bridge` is listed as stdio; a Streamable HTTP session whose
// stream closed and did not come back is closed (its client exited without a DELETE); and a
// client that made no tool call (a health check: `claude mcp list`) leaves the list a few minutes
// after it left, counted instead. Activity entries are cut (boundActivityEntry) as they are made.
import { isGroveWindow } from '../../shared/clients.ts';
import type { McpClientEvent, McpClientIdentity } from '../mcp/client-events.ts';
import {
  boundActivityEntry,
  type ActivityEntry,
  type ClientInfo,
  type RunningCall,
} from '../../shared/model.ts';

export interface ClientRegistryOptions {
  /**
   * The list changed. `healthChecks`: how many clients that made no call (health checks) were
   * dropped from the list since the last time.
   */
  onClients(clients: ClientInfo[], healthChecks: number): void;
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
  /**
   * How long a client that made no tool call stays listed after it left (closed, or a modern
   * client silent this long): default 3 min. Then it is dropped and counted as a health check.
   */
  probeGraceMs?: number;
  /**
   * A Streamable HTTP session whose stream closed and was not opened again within this time is
   * shown closed (default 5 s; the SDK's client reopens a dropped stream within ~1 s): its client
   * exited without ending its session. Any request on the session opens it again.
   */
  streamGoneMs?: number;
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
  /** The next housekeeping pass (a stream gone for good, a health check's grace over). */
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  /** When each open session's last stream closed (sessions without a stream now). */
  private readonly streamClosedAt = new Map<string, number>();
  /** Sessions shown closed because their stream went away: a request opens them again. */
  private readonly leftWithoutClosing = new Set<string>();
  /** Health checks dropped since the last `onClients`. */
  private healthChecksDropped = 0;
  private sequence = 0;
  /** Activity ids are unique across the worktree process's restarts: pid and start time. */
  private readonly idPrefix = `${process.pid}.${Date.now().toString(36)}`;

  constructor(options: ClientRegistryOptions) {
    this.options = {
      flushMs: 200,
      maxClosed: 20,
      modernTtlMs: 10 * 60_000,
      maxModern: 50,
      probeGraceMs: 3 * 60_000,
      streamGoneMs: 5_000,
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
          transport: event.bridged === true ? 'stdio' : event.transport,
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
        this.streamClosedAt.delete(event.sessionId);
        const alreadyLeft = this.leftWithoutClosing.delete(event.sessionId);
        if (!client) return;
        client.connection = 'closed';
        client.streamOpen = false;
        // The client's own goodbye is activity; Grove reaping a silent session is not.
        if (event.reason === 'client') {
          client.lastActivityAt = Math.max(client.lastActivityAt, event.at);
        }
        if (!alreadyLeft) client.closedAt = event.at;
        break;
      }
      case 'session-stream': {
        const client = this.clients.get(event.sessionId);
        if (!client) return;
        if (client.connection === 'closed' && !this.reopen(client)) return;
        client.streamOpen = event.open;
        client.lastActivityAt = Math.max(client.lastActivityAt, event.at);
        if (event.open) this.streamClosedAt.delete(client.id);
        else this.streamClosedAt.set(client.id, event.at);
        break;
      }
      case 'client-seen':
        this.touchModern(event.clientInfo ?? UNKNOWN, event.bridged === true, event.at);
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
        // Cut here, before the host sees it: a tool may echo a client's argument into its error.
        const entry = boundActivityEntry({
          id: `${this.idPrefix}-${++this.sequence}`,
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
        this.pendingActivity.push(entry);
        break;
      }
    }
    this.clientsDirty = true;
    this.schedule();
  }

  /** The client a call belongs to (a modern one is seen again by it; a session that left is back). */
  private clientOf(event: {
    era: 'legacy' | 'modern';
    sessionId?: string;
    clientInfo?: McpClientIdentity;
    bridged?: boolean;
    at: number;
  }): ClientInfo | undefined {
    if (event.era === 'modern') {
      return this.touchModern(event.clientInfo ?? UNKNOWN, event.bridged === true, event.at);
    }
    const client = event.sessionId === undefined ? undefined : this.clients.get(event.sessionId);
    if (client?.connection === 'closed') this.reopen(client);
    return client;
  }

  /** Opens again a session shown closed because its stream went away; false if it really ended. */
  private reopen(client: ClientInfo): boolean {
    if (!this.leftWithoutClosing.delete(client.id)) return false;
    client.connection = 'open';
    delete client.closedAt;
    return true;
  }

  /** The current list: open sessions and modern clients first, then recently closed sessions. */
  list(now = Date.now()): ClientInfo[] {
    this.sweep(now);
    return [...this.clients.values()]
      .sort((a, b) => rank(a) - rank(b) || a.firstSeenAt - b.firstSeenAt)
      .map((client) => ({ ...client }));
  }

  /**
   * Housekeeping as of `now`: sessions whose stream is gone for good are closed, health checks
   * past their grace and modern clients past their time are dropped, closed sessions capped.
   * Returns whether the list changed, and arms the timer for the next pass.
   */
  private sweep(now: number): boolean {
    const { streamGoneMs, probeGraceMs, modernTtlMs, maxClosed } = this.options;
    let changed = false;
    let next = Infinity;
    for (const [id, closedAt] of this.streamClosedAt) {
      const client = this.clients.get(id);
      if (!client || client.connection !== 'open' || client.streamOpen) {
        this.streamClosedAt.delete(id);
      } else if (now - closedAt >= streamGoneMs) {
        this.streamClosedAt.delete(id);
        this.leftWithoutClosing.add(id);
        client.connection = 'closed';
        client.closedAt = closedAt;
        changed = true;
      } else {
        next = Math.min(next, closedAt + streamGoneMs);
      }
    }
    for (const client of [...this.clients.values()]) {
      const leftAt =
        client.connection === 'closed'
          ? (client.closedAt ?? client.lastActivityAt)
          : client.connection === 'stateless'
            ? client.lastActivityAt
            : undefined;
      if (leftAt === undefined) continue;
      const expiresAt = client.calls === 0 ? leftAt + probeGraceMs : Infinity;
      const staleAt = client.connection === 'stateless' ? leftAt + modernTtlMs : Infinity;
      if (now >= Math.min(expiresAt, staleAt)) {
        this.forget(client.id);
        if (now >= expiresAt && !isGroveWindow(client)) this.healthChecksDropped++;
        changed = true;
      } else {
        next = Math.min(next, expiresAt, staleAt);
      }
    }
    const closed = [...this.clients.values()]
      .filter((client) => client.connection === 'closed')
      .sort((a, b) => (b.closedAt ?? 0) - (a.closedAt ?? 0));
    for (const old of closed.slice(maxClosed)) {
      this.forget(old.id);
      changed = true;
    }
    this.armWake(next);
    return changed;
  }

  private forget(id: string): void {
    this.clients.delete(id);
    this.streamClosedAt.delete(id);
    this.leftWithoutClosing.delete(id);
  }

  /** Runs a flush at `at` (epoch ms) unless one is due earlier. Never keeps the process alive. */
  private armWake(at: number): void {
    if (at === this.wakeAt) return;
    clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = undefined;
    if (at === Infinity) return;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeAt = Infinity;
        this.wakeTimer = undefined;
        this.clientsDirty = true;
        this.flush();
      },
      Math.max(0, at - Date.now()) + 1,
    );
    this.wakeTimer.unref?.();
  }

  /** Sends whatever is pending now (used before shutdown). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.clientsDirty) {
      this.clientsDirty = false;
      const list = this.list();
      const serialized = JSON.stringify(list);
      if (serialized !== this.lastSentClients || this.healthChecksDropped > 0) {
        this.lastSentClients = serialized;
        const healthChecks = this.healthChecksDropped;
        this.healthChecksDropped = 0;
        this.options.onClients(list, healthChecks);
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

  /** Stops every timer (the owner is going away); a later event starts them again. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armWake(Infinity);
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => this.flush(), this.options.flushMs);
  }

  private touchModern(identity: McpClientIdentity, bridged: boolean, at: number): ClientInfo {
    // The same name through the bridge and directly are two clients (two programs).
    const id = `modern:${bridged ? 'stdio:' : ''}${identity.name}@${identity.version}`;
    let client = this.clients.get(id);
    if (!client) {
      this.evictModern(Math.max(1, this.options.maxModern) - 1);
      client = {
        id,
        name: identity.name,
        version: identity.version,
        transport: bridged ? 'stdio' : 'streamable-http',
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
