// The Clients tab: every client of this worktree's server, live from host events — name and
// version, how it connects (Streamable HTTP, SSE, or stdio through `grove bridge`), since when,
// last activity, calls, and its state (shared/clients.ts): connected (a stream is open), active
// (requests in the last minute), idle, or closed. The table lists the rows the tab's badge counts
// (listedClients): Grove's own window is a note below it, never a row. Health checks (clients that
// made no call) leave the list a few minutes after they left, counted in a line of their own.
// Clients are known from this run of Grove only, while Activity keeps calls across restarts: with
// no client yet but earlier calls in Activity, the empty state says so instead of "No clients".
import {
  clientCalls,
  clientState,
  isGroveWindow,
  listedClients,
  type ClientState,
} from '../../../shared/clients.ts';
import type { ActivityEntry, WorktreeState } from '../../../shared/model.ts';
import {
  clientStateLabel,
  count,
  eraDescription,
  plural,
  relativeTime,
  timeOfDay,
  transportLabel,
} from '../common/format.ts';
import { useNow } from '../common/use-now.ts';

const ORDER: Record<ClientState, number> = { connected: 0, active: 1, idle: 2, closed: 3 };

export function ClientsTab({
  worktree,
  activity,
}: {
  worktree: WorktreeState;
  activity: readonly ActivityEntry[];
}) {
  const now = useNow();
  const clients = listedClients(worktree.clients)
    .map((client) => ({ client, state: clientState(client, now) }))
    .sort(
      (a, b) =>
        ORDER[a.state] - ORDER[b.state] || b.client.lastActivityAt - a.client.lastActivityAt,
    );
  const windowConnected = worktree.clients.some(
    (client) => isGroveWindow(client) && clientState(client, now) !== 'closed',
  );
  const healthChecks = worktree.healthChecksToday ?? 0;
  const notes = (
    <>
      {healthChecks > 0 && (
        <p className="muted clients-note" data-testid="health-checks">
          {plural(healthChecks, 'health check')} today: clients that connected, made no call and
          left (such as <code>claude mcp list</code>). They leave this list a few minutes after.
        </p>
      )}
      {windowConnected && (
        <p className="muted clients-note">
          This window is connected too (tool console, specs you open); it is not counted here.
        </p>
      )}
    </>
  );

  if (clients.length === 0) {
    const earlier = clientCalls(activity);
    const names = [...new Set(earlier.map((call) => call.clientName))].sort();
    return (
      <div>
        <div className="empty" role="status">
          <p className="empty__title">
            {earlier.length > 0 ? 'No clients since Grove started' : 'No clients yet'}
          </p>
          {earlier.length > 0 && (
            <p className="empty__detail">
              Activity keeps {plural(earlier.length, 'earlier call')} from{' '}
              {names.length <= 3 ? names.join(', ') : plural(names.length, 'client')}: clients that
              connected before Grove (re)started. They show here when they connect again.
            </p>
          )}
          <p className="empty__detail">
            {worktree.status.state === 'running'
              ? 'Clients show up here as soon as they connect. The Connect tab has ready-to-paste configs.'
              : 'Start the server, then connect a client (see the Connect tab).'}
          </p>
        </div>
        {notes}
      </div>
    );
  }

  return (
    <div>
      <div className="table-wrap">
        <table className="table table--wrap" aria-label="Clients">
          <thead>
            <tr>
              <th scope="col">Client</th>
              <th scope="col">Connects over</th>
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
                </th>
                <td title={eraDescription(client.era)}>{transportLabel(client.transport)}</td>
                <td title={new Date(client.firstSeenAt).toLocaleString()}>
                  {timeOfDay(client.firstSeenAt)}
                </td>
                <td title={new Date(client.lastActivityAt).toLocaleString()}>
                  {relativeTime(client.lastActivityAt, now)}
                </td>
                <td className="num">{count(client.calls)}</td>
                <td>
                  <span className={`state state--${state}`}>{clientStateLabel(state)}</span>
                  {state === 'closed' && client.closedAt !== undefined && (
                    <span className="muted"> {relativeTime(client.closedAt, now)}</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {notes}
    </div>
  );
}
