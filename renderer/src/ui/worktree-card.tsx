// One worktree: branch (or "detached"), path, its server's status and URLs, Start/Stop, and any
// notice from the host. A named region (the branch), so people and tests can find it by name.
import { useId } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import type { CommandError, ServerCommand } from '../store/host-store.ts';
import { CopyButton } from './copy-button.tsx';
import { ServerStatusText, StatusDot } from './server-status.tsx';
import { useHostStore } from './store-context.tsx';

export interface WorktreeCardProps {
  worktree: WorktreeState;
  pending: ServerCommand | undefined;
  commandError: CommandError | undefined;
  /** False while the link to the host is down: commands would act on stale state. */
  live: boolean;
}

export function WorktreeCard({ worktree, pending, commandError, live }: WorktreeCardProps) {
  const store = useHostStore();
  const headingId = useId();
  const { status } = worktree;
  const canStart = live && !pending && (status.state === 'stopped' || status.state === 'error');
  const canStop = live && !pending && (status.state === 'running' || status.state === 'starting');

  return (
    <section
      className="worktree"
      aria-labelledby={headingId}
      aria-busy={pending ? true : undefined}
    >
      <header className="worktree__header">
        <StatusDot status={status} />
        <div className="worktree__title">
          <h3 id={headingId} className={worktree.branch === null ? 'detached' : undefined}>
            {worktree.branch ?? 'detached'}
          </h3>
          {worktree.isMain && <span className="tag">main worktree</span>}
        </div>
        <div className="worktree__actions">
          <button
            type="button"
            className="button"
            disabled={!canStart}
            onClick={() => void store.startServer(worktree.id)}
          >
            Start
          </button>
          <button
            type="button"
            className="button"
            disabled={!canStop}
            onClick={() => void store.stopServer(worktree.id)}
          >
            Stop
          </button>
        </div>
      </header>
      <p className="worktree__path" title={worktree.path}>
        {worktree.path}
      </p>
      <ServerStatusText status={status} />
      <dl className="urls">
        <div className="urls__row">
          <dt>SSE</dt>
          <dd>
            <code>{worktree.urls.sse}</code>
            <CopyButton value={worktree.urls.sse} label="Copy SSE URL" />
          </dd>
        </div>
        <div className="urls__row">
          <dt>Streamable HTTP</dt>
          <dd>
            <code>{worktree.urls.mcp}</code>
            <CopyButton value={worktree.urls.mcp} label="Copy Streamable HTTP URL" />
          </dd>
        </div>
      </dl>
      {worktree.portNotice && (
        <p className="notice" role="note">
          {worktree.portNotice}
        </p>
      )}
      {commandError && (
        <p className="notice notice--error" role="alert">
          Could not {commandError.command} the server: {commandError.message}
        </p>
      )}
    </section>
  );
}
