// What a client's state is, one definition for every view (sidebar count, Clients tab, headless
// output): a client with an open stream (an SSE session, or a Streamable HTTP session's GET
// stream) is *connected*; one without a stream is *active* while it sends requests and *idle*
// after ACTIVE_WINDOW_MS of silence; a session that ended is *closed*. "Connected clients" counts
// connected and active clients, never Grove's own window (its tool console).
import type { ClientInfo } from './model.ts';

/** Silence after which a client without an open stream is idle, and no longer counted. */
export const ACTIVE_WINDOW_MS = 60_000;

/** The name Grove's own window (the tool console) uses as an MCP client. */
export const GROVE_WINDOW_CLIENT_NAME = 'Grove (this window)';

export type ClientState = 'connected' | 'active' | 'idle' | 'closed';

export function clientState(client: ClientInfo, now: number): ClientState {
  if (client.connection === 'closed') return 'closed';
  if (client.streamOpen) return 'connected';
  return now - client.lastActivityAt <= ACTIVE_WINDOW_MS ? 'active' : 'idle';
}

/** True for Grove's own window, which is shown but never counted as a connected client. */
export function isGroveWindow(client: Pick<ClientInfo, 'name'>): boolean {
  return client.name === GROVE_WINDOW_CLIENT_NAME;
}

/** How many clients count as connected: connected or active, Grove's own window left out. */
export function connectedClientCount(clients: readonly ClientInfo[], now: number): number {
  return clients.filter((client) => {
    if (isGroveWindow(client)) return false;
    const state = clientState(client, now);
    return state === 'connected' || state === 'active';
  }).length;
}
