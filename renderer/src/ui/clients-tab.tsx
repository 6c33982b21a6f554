// The Clients tab: every client of this worktree's server, live from host events — name and
// version, transport and protocol era, since when, last activity, calls, and its state
// (shared/clients.ts): connected (a stream is open), active (requests in the last minute), idle,
// or closed. Grove's own window is listed, marked, and never counted as connected.
import { clientState, isGroveWindow, type ClientState } from '../../../shared/clients.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import {
  clientStateLabel,
  eraLabel,
  relativeTime,
  timeOfDay,
  transportLabel,
} from '../common/format.ts';
import { useNow } from '../common/use-now.ts';

const ORDER: Record<ClientState, number> = { connected: 0, active: 1, idle: 2, closed: 3 };

export function ClientsTab({ worktree }: { worktree: WorktreeState }) {
  const now = useNow();
  const clients = worktree.clients
    .map((client) => ({ client, state: clientState(client, now) }))
    .sort(
      (a, b) =>
        ORDER[a.state] - ORDER[b.state] || b.client.lastActivityAt - a.client.lastActivityAt,
    );

  if (clients.length === 0) {
    return (
      <div className="empty" role="status">
        <p className="empty__title">No clients yet</p>
        <p className="empty__detail">
          {worktree.status.state === 'running'
            ? 'Clients show up here as soon as they connect. The Connect tab has ready-to-paste configs.'
            : 'Start the server, then connect a client (see the Connect tab).'}
        </p>
      </div>
    );
  }

  return (
    <div className="table-wrap">
      <table className="table table--wrap" aria-label="Clients">
        <thead>
          <tr>
            <th scope="col">Client</th>
            <th scope="col">Transport</th>
            <th scope="col">Since</th>
            <th scope="col">Last activity</th>
            <th scope="col" className="num">
              Calls
            </th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {clients.map(({ client, state }) => (
            <tr
              key={client.id}
              className={state === 'closed' || state === 'idle' ? 'row--dim' : undefined}
            >
              <th scope="row">
                <span className="client-name">{client.name}</span>{' '}
                <span className="muted">{client.version}</span>
                {isGroveWindow(client) && (
                  <span className="tag tag--quiet" title="Not counted as a connected client">
                    Grove
                  </span>
                )}
              </th>
              <td>
                {transportLabel(client.transport)}
                <span className="client-era">{eraLabel(client.era)}</span>
              </td>
              <td title={new Date(client.firstSeenAt).toLocaleString()}>
                {timeOfDay(client.firstSeenAt)}
              </td>
              <td title={new Date(client.lastActivityAt).toLocaleString()}>
                {relativeTime(client.lastActivityAt, now)}
              </td>
              <td className="num">{client.calls}</td>
              <td>
                <span className={`state state--${state}`}>{clientStateLabel(state)}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
