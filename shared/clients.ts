// What a client's state is, one definition for every view (sidebar count, Clients tab, headless
// output): a client with an open stream (an SSE session, or a Streamable HTTP session's GET
// stream) is *connected*; one without a stream is *active* while it sends requests and *idle*
// after ACTIVE_WINDOW_MS of silence; a session that ended is *closed*. "Connected clients" counts
// connected and active clients, never Grove's own window (its tool console, the spec views). The
// window's own connection and calls are not the worktree's clients and activity: the Clients table,
// the Activity list (unless the user asks for them) and every badge leave them out.
import type { ActivityEntry, ClientInfo, RunningCall } from './model.ts';

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

/** True for a call Grove's own window made (the tool console, a spec opened in the window). */
export function isWindowCall(call: Pick<ActivityEntry | RunningCall, 'clientName'>): boolean {
  return call.clientName === GROVE_WINDOW_CLIENT_NAME;
}

/** The worktree's clients as the Clients table lists them (and its badge counts): not the window. */
export function listedClients(clients: readonly ClientInfo[]): ClientInfo[] {
  return clients.filter((client) => !isGroveWindow(client));
}

/** The calls of the worktree's clients (what the Activity badge counts): not the window's. */
export function clientCalls<T extends Pick<ActivityEntry | RunningCall, 'clientName'>>(
  calls: readonly T[],
): T[] {
  return calls.filter((call) => !isWindowCall(call));
}

/** How many clients count as connected: connected or active, Grove's own window left out. */
export function connectedClientCount(clients: readonly ClientInfo[], now: number): number {
  return listedClients(clients).filter((client) => {
    const state = clientState(client, now);
    return state === 'connected' || state === 'active';
  }).length;
}
