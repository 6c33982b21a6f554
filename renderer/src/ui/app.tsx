// The window: a header with the overall picture and the link's health, then one of the loading,
// error, empty or repository views, chosen from the mirrored host state.
import type { HostSnapshot } from '../../../shared/model.ts';
import type { ConnectionState } from '../host-api/connection.ts';
import { RepoList } from './repo-list.tsx';
import { useHostState } from './store-context.tsx';

export function App() {
  const state = useHostState();
  const { snapshot, connection } = state;

  let body;
  if (connection.state === 'failed') {
    body = <Message title="Grove cannot connect" detail={connection.message} tone="error" />;
  } else if (!snapshot) {
    body =
      connection.state === 'reconnecting' ? (
        <Message
          title="Cannot reach the Grove host"
          detail={`${connection.message} Retrying automatically.`}
          tone="error"
        />
      ) : (
        <Message title="Connecting to the Grove host…" tone="quiet" busy />
      );
  } else if (snapshot.repos.length === 0) {
    body = (
      <Message
        title="No repositories open"
        detail="Start Grove with a repository path, for example: grove serve ~/code/my-project"
        tone="quiet"
      />
    );
  } else {
    body = <RepoList snapshot={snapshot} state={state} />;
  }

  return (
    <div className="app">
      <header className="app__header">
        <h1>Grove</h1>
        {snapshot && snapshot.repos.length > 0 && <p className="summary">{summary(snapshot)}</p>}
        <ConnectionBadge connection={connection} hasData={snapshot !== null} />
      </header>
      <main className="app__main" aria-busy={!snapshot && connection.state === 'connecting'}>
        {body}
      </main>
    </div>
  );
}

function summary(snapshot: HostSnapshot): string {
  const worktrees = snapshot.repos.flatMap((repo) => repo.worktrees);
  const running = worktrees.filter((w) => w.status.state === 'running').length;
  const errors = worktrees.filter((w) => w.status.state === 'error').length;
  const parts = [
    `${running} of ${worktrees.length} ${worktrees.length === 1 ? 'server' : 'servers'} running`,
  ];
  if (errors > 0) parts.push(`${errors} with errors`);
  return parts.join(', ');
}

function ConnectionBadge({
  connection,
  hasData,
}: {
  connection: ConnectionState;
  hasData: boolean;
}) {
  if (connection.state === 'open') return <span className="connection connection--open">Live</span>;
  if (connection.state === 'reconnecting' && hasData) {
    return (
      <span className="connection connection--lost" role="status" title={connection.message}>
        Connection lost — reconnecting…
      </span>
    );
  }
  return null;
}

function Message({
  title,
  detail,
  tone,
  busy = false,
}: {
  title: string;
  detail?: string;
  tone: 'quiet' | 'error';
  busy?: boolean;
}) {
  return (
    <div className={`message message--${tone}`} role={tone === 'error' ? 'alert' : 'status'}>
      {busy && <span className="spinner" aria-hidden="true" />}
      <p className="message__title">{title}</p>
      {detail && <p className="message__detail">{detail}</p>}
    </div>
  );
}
