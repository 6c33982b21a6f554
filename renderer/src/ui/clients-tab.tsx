// The Clients tab: every client of this worktree's server, live from host events — name and
// version, transport and protocol era, since when, last activity, calls, and whether its session
// is open, closed, or (stateless modern clients) recently seen.
import type { ClientInfo, WorktreeState } from '../../../shared/model.ts';
import { connectionLabel, relativeTime, timeOfDay, transportLabel } from './format.ts';
import { useNow } from './use-now.ts';

const ORDER: Record<ClientInfo['connection'], number> = { open: 0, stateless: 1, closed: 2 };

export function ClientsTab({ worktree }: { worktree: WorktreeState }) {
  const now = useNow();
  const clients = [...worktree.clients].sort(
    (a, b) => ORDER[a.connection] - ORDER[b.connection] || b.lastActivityAt - a.lastActivityAt,
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
      <table className="table" aria-label="Clients">
        <thead>
          <tr>
            <th scope="col">Client</th>
            <th scope="col">Transport</th>
            <th scope="col">Connected since</th>
            <th scope="col">Last activity</th>
            <th scope="col" className="num">
              Calls
            </th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {clients.map((client) => (
            <tr key={client.id} className={client.connection === 'closed' ? 'row--dim' : undefined}>
              <th scope="row">
                <span className="client-name">{client.name}</span>{' '}
                <span className="muted">{client.version}</span>
              </th>
              <td>
                {transportLabel(client.transport)}{' '}
                <span className="tag tag--quiet">{client.era}</span>
              </td>
              <td title={new Date(client.firstSeenAt).toLocaleString()}>
                {timeOfDay(client.firstSeenAt)}
              </td>
              <td title={new Date(client.lastActivityAt).toLocaleString()}>
                {relativeTime(client.lastActivityAt, now)}
              </td>
              <td className="num">{client.calls}</td>
              <td>
                <span className={`state state--${client.connection}`}>
                  {connectionLabel(client.connection)}
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
