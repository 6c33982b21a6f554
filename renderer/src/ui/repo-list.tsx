// The open repositories, each a named region listing its worktrees.
import { useId } from 'react';
import type { HostSnapshot, RepoState } from '../../../shared/model.ts';
import type { HostStoreState } from '../store/host-store.ts';
import { WorktreeCard } from './worktree-card.tsx';

export function RepoList({ snapshot, state }: { snapshot: HostSnapshot; state: HostStoreState }) {
  const live = state.connection.state === 'open';
  return (
    <div className={live ? 'repos' : 'repos repos--stale'}>
      {snapshot.repos.map((repo) => (
        <RepoSection key={repo.id} repo={repo} state={state} live={live} />
      ))}
    </div>
  );
}

function RepoSection({
  repo,
  state,
  live,
}: {
  repo: RepoState;
  state: HostStoreState;
  live: boolean;
}) {
  const headingId = useId();
  return (
    <section className="repo" aria-labelledby={headingId}>
      <header className="repo__header">
        <h2 id={headingId}>{repo.name}</h2>
        <p className="repo__path" title={repo.path}>
          {repo.path}
        </p>
      </header>
      {repo.worktrees.length === 0 ? (
        <p className="empty-inline">No worktrees found in this repository.</p>
      ) : (
        <ul className="worktrees">
          {repo.worktrees.map((worktree) => (
            <li key={worktree.id}>
              <WorktreeCard
                worktree={worktree}
                pending={state.pending[worktree.id]}
                commandError={state.commandErrors[worktree.id]}
                live={live}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
