// The window: a header with the overall picture and the link's health, then a sidebar of repos and
// worktrees beside the selected worktree's view — or the loading, error or empty state, chosen from
// the mirrored host state. A skip link (the first Tab stop) jumps over the sidebar to the worktree.
// While the host cannot be reached, the window says what to do about it, not only what is wrong.
import { useRememberedState } from '../common/use-remembered-state.ts';
import type { HostSnapshot, WorktreeState } from '../../../shared/model.ts';
import type { ConnectionState } from '../host-api/connection.ts';
import { Sidebar } from './sidebar.tsx';
import { useHostState } from '../common/store-context.tsx';
import { WorktreeView } from './worktree-view.tsx';

const isAnyString = (value: string): value is string => value !== '';

const MAIN_ID = 'worktree-main';

/** What to do while the host is away: this page retries its own address only. */
export const RECONNECT_ADVICE =
  'This page keeps retrying its own address. If the host stopped, restart grove serve (or the ' +
  'Grove app) and open the URL it prints: with --ui-port 0 it is a new one.';

export function App() {
  const state = useHostState();
  const { snapshot, connection } = state;
  // The selected worktree survives a reload; worktree ids are opaque strings.
  const [selectedId, setSelectedId] = useRememberedState<string>('worktree', '', isAnyString);

  const worktrees = snapshot?.repos.flatMap((repo) => repo.worktrees) ?? [];
  // The selection falls back to the first worktree when none is chosen or it went away.
  const selected: WorktreeState | undefined =
    worktrees.find((w) => w.id === selectedId) ?? worktrees[0];

  let body;
  if (connection.state === 'failed') {
    body = <Message title="Grove cannot connect" detail={connection.message} tone="error" />;
  } else if (!snapshot) {
    body =
      connection.state === 'reconnecting' ? (
        <Message
          title="Cannot reach the Grove host"
          detail={`${connection.message} ${RECONNECT_ADVICE}`}
          tone="error"
        />
      ) : (
        <Message title="Connecting to the Grove host…" tone="quiet" busy />
      );
  } else {
    const live = connection.state === 'open';
    body = (
      <div className={live ? 'layout' : 'layout layout--stale'}>
        <Sidebar
          snapshot={snapshot}
          selectedId={selected?.id ?? null}
          onSelect={setSelectedId}
          live={live}
        />
        <main className="layout__main" id={MAIN_ID} tabIndex={-1}>
          {selected ? (
            <WorktreeView
              key={selected.id}
              worktree={selected}
              activity={snapshot.activity[selected.id] ?? []}
              pending={state.pending[selected.id]}
              commandError={state.commandErrors[selected.id]}
              live={live}
            />
          ) : (
            <Message
              title="No repositories open"
              detail="Add a repository with the field in the sidebar: any path inside one of its worktrees."
              tone="quiet"
            />
          )}
        </main>
      </div>
    );
  }

  return (
    <div className="app">
      {snapshot && (
        <a
          className="skip-link"
          href={`#${MAIN_ID}`}
          onClick={(event) => {
            event.preventDefault();
            document.getElementById(MAIN_ID)?.focus();
          }}
        >
          Skip to the worktree
        </a>
      )}
      <header className="app__header">
        <div className="brand">
          <span className="brand__mark" aria-hidden="true" />
          <h1>Grove</h1>
        </div>
        {snapshot && worktrees.length > 0 && (
          <p className="summary">{summary(snapshot, connection.state === 'open')}</p>
        )}
        <ConnectionBadge connection={connection} hasData={snapshot !== null} />
      </header>
      {snapshot && connection.state === 'reconnecting' && (
        <p className="app__lost" role="alert">
          {connection.message} {RECONNECT_ADVICE}
        </p>
      )}
      <div className="app__body" aria-busy={!snapshot && connection.state === 'connecting'}>
        {body}
      </div>
    </div>
  );
}

function summary(snapshot: HostSnapshot, live: boolean): string {
  const worktrees = snapshot.repos.flatMap((repo) => repo.worktrees);
  // The last count heard may no longer be true: the host (and its servers) may have stopped.
  if (!live) {
    return `${worktrees.length} ${worktrees.length === 1 ? "server's" : "servers'"} state unknown: the host cannot be reached`;
  }
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

export function Message({
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
