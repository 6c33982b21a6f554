// The sidebar: every open repository with its worktrees (branch, status dot, connected clients,
// drifted specs, the overall drift status as a word, "moved" when another program took its port,
// the path as a tooltip), a way to remove a repository, and the "Add repository" field. Arrow
// keys move between worktrees; Enter or Space selects one.
import { useId, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import type { HostSnapshot, RepoState, WorktreeState } from '../../../shared/model.ts';
import { connectedClientCount } from '../../../shared/clients.ts';
import { plural } from '../common/format.ts';
import { useNow } from '../common/use-now.ts';
import { statusLabel, StatusDot } from './server-status.tsx';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { ConfirmButtons } from '../common/confirm-buttons.tsx';
import { DriftWord, driftDescription } from '../common/drift-word.tsx';
import type { LiveDrift } from '../../../shared/notarai-check.ts';

export interface SidebarProps {
  snapshot: HostSnapshot;
  selectedId: string | null;
  onSelect(id: string): void;
  live: boolean;
}

export function Sidebar({ snapshot, selectedId, onSelect, live }: SidebarProps) {
  const listRef = useRef<HTMLDivElement>(null);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>): void => {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(event.key)) return;
    const items = [
      ...(listRef.current?.querySelectorAll<HTMLButtonElement>('[data-worktree-item]') ?? []),
    ];
    if (items.length === 0) return;
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    let next = at;
    if (event.key === 'ArrowDown') next = at < 0 ? 0 : Math.min(items.length - 1, at + 1);
    if (event.key === 'ArrowUp') next = at < 0 ? 0 : Math.max(0, at - 1);
    if (event.key === 'Home') next = 0;
    if (event.key === 'End') next = items.length - 1;
    event.preventDefault();
    items[next]?.focus();
  };

  return (
    <nav className="sidebar" aria-label="Repositories and worktrees">
      <div className="sidebar__list" ref={listRef} onKeyDown={onKeyDown}>
        {snapshot.repos.length === 0 ? (
          <p className="sidebar__empty">No repositories yet.</p>
        ) : (
          snapshot.repos.map((repo) => (
            <RepoGroup
              key={repo.id}
              repo={repo}
              reconcile={snapshot.reconcile}
              selectedId={selectedId}
              onSelect={onSelect}
              live={live}
            />
          ))
        )}
      </div>
      <AddRepository
        live={live}
        knownRepoIds={snapshot.repos.map((repo) => repo.id)}
        onSelect={onSelect}
      />
    </nav>
  );
}

function RepoGroup({
  repo,
  reconcile,
  selectedId,
  onSelect,
  live,
}: {
  repo: RepoState;
  reconcile: HostSnapshot['reconcile'];
  selectedId: string | null;
  onSelect(id: string): void;
  live: boolean;
}) {
  const store = useHostStore();
  const headingId = useId();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const remove = async (): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await store.commands.removeRepo({ repoId: repo.id });
    } catch (caught) {
      setError(errorText(caught));
      setBusy(false);
      setConfirming(false);
    }
  };

  return (
    <section className="repo-group" aria-labelledby={headingId}>
      <header className="repo-group__header">
        <h2 id={headingId} title={repo.path}>
          {repo.name}
        </h2>
        {!confirming && (
          <button
            type="button"
            className="icon-button"
            aria-label={`Remove repository ${repo.name}`}
            title="Remove repository"
            disabled={!live}
            onClick={() => setConfirming(true)}
          >
            ×
          </button>
        )}
      </header>
      {confirming && (
        <div className="confirm" role="group" aria-label={`Remove ${repo.name}?`}>
          <p>Stop its servers and forget {repo.name}?</p>
          <div className="confirm__actions">
            <ConfirmButtons
              confirmLabel="Remove"
              busy={busy}
              onConfirm={() => void remove()}
              onCancel={() => setConfirming(false)}
            />
          </div>
        </div>
      )}
      {error && (
        <p className="sidebar__error" role="alert">
          {error}
        </p>
      )}
      {repo.worktrees.length === 0 ? (
        <p className="sidebar__empty">No worktrees found.</p>
      ) : (
        <ul className="worktree-list">
          {repo.worktrees.map((worktree) => (
            <li key={worktree.id}>
              <WorktreeItem
                worktree={worktree}
                drift={reconcile[worktree.id]?.drift ?? null}
                selected={worktree.id === selectedId}
                onSelect={onSelect}
                live={live}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function WorktreeItem({
  worktree,
  drift,
  selected,
  onSelect,
  live,
}: {
  worktree: WorktreeState;
  /** NotarAI 0.7's overall drift score of the worktree's specs, once computed. */
  drift: LiveDrift | null;
  selected: boolean;
  onSelect(id: string): void;
  /** False while the host cannot be reached: the status shown is unknown. */
  live: boolean;
}) {
  const descriptionId = useId();
  const now = useNow();
  const clients = connectedClientCount(worktree.clients, now);
  const drifted = worktree.reconcileTotals?.specsNeedingReconciliation ?? 0;
  const name = worktree.branch ?? 'detached';
  const moved = worktree.movedFromPort !== null && worktree.movedFromPort !== undefined;
  return (
    <button
      type="button"
      data-worktree-item=""
      className={selected ? 'worktree-item worktree-item--selected' : 'worktree-item'}
      aria-current={selected ? 'page' : undefined}
      aria-label={name}
      aria-describedby={descriptionId}
      title={worktree.path}
      onClick={() => onSelect(worktree.id)}
    >
      <StatusDot status={worktree.status} known={live} />
      <span
        className={
          worktree.branch === null ? 'worktree-item__name detached' : 'worktree-item__name'
        }
      >
        {name}
      </span>
      {clients > 0 && (
        <span className="count" aria-hidden="true" title="Connected clients">
          {clients}
        </span>
      )}
      {drifted > 0 && (
        <span className="count count--drift" aria-hidden="true" title="Specs to reconcile">
          {drifted}
        </span>
      )}
      {moved && (
        <span
          className="worktree-item__moved"
          aria-hidden="true"
          title={`Port moved: ${worktree.movedFromPort} was in use, now ${worktree.port}`}
        >
          moved
        </span>
      )}
      {drift && (
        <span className="worktree-item__drift" aria-hidden="true">
          <DriftWord score={drift.score} status={drift.status} showScore={false} />
        </span>
      )}
      <span id={descriptionId} className="visually-hidden">
        {statusLabel(worktree.status, now, live)}, {plural(clients, 'connected client')}
        {drifted > 0 && `, ${plural(drifted, 'spec')} to reconcile`}
        {drift && `, ${driftDescription(drift.score, drift.status)}`}
        {moved && `, port moved from ${worktree.movedFromPort} to ${worktree.port}`},{' '}
        {worktree.path}
      </span>
    </button>
  );
}

function AddRepository({
  live,
  knownRepoIds,
  onSelect,
}: {
  live: boolean;
  /** Repositories open before the add: adding one of them again says it is already open. */
  knownRepoIds: readonly string[];
  onSelect(worktreeId: string): void;
}) {
  const store = useHostStore();
  const inputId = useId();
  const [path, setPath] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [added, setAdded] = useState<string | null>(null);

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    const trimmed = path.trim();
    if (!trimmed) {
      setError('Enter the path of a repository or of one of its worktrees.');
      return;
    }
    setBusy(true);
    setError(null);
    setAdded(null);
    try {
      const repo = await store.commands.addRepo({ path: trimmed });
      setPath('');
      // Show what was added (or was already open): its main worktree, selected.
      const first = repo.worktrees.find((w) => w.isMain) ?? repo.worktrees[0];
      if (first) onSelect(first.id);
      setAdded(
        knownRepoIds.includes(repo.id)
          ? `${repo.name} is already open; it is selected.`
          : `Added ${repo.name} (${plural(repo.worktrees.length, 'worktree')}); it is selected.`,
      );
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="add-repo"
      onSubmit={(event) => void submit(event)}
      aria-label="Add a repository"
    >
      <p className="add-repo__label" aria-hidden="true">
        Add repository
      </p>
      <label htmlFor={inputId} className="visually-hidden">
        Repository path
      </label>
      <div className="add-repo__row">
        <input
          id={inputId}
          className="input"
          type="text"
          placeholder="Path inside a repository"
          spellCheck={false}
          autoComplete="off"
          value={path}
          aria-invalid={error ? true : undefined}
          onChange={(event) => setPath(event.target.value)}
          disabled={busy}
        />
        {window.groveNative && (
          <button
            type="button"
            className="button"
            aria-label="Choose a repository folder"
            disabled={busy}
            onClick={() =>
              void window.groveNative
                ?.pickRepositoryFolder()
                .then((picked) => picked && setPath(picked))
            }
          >
            Browse…
          </button>
        )}
        <button
          type="submit"
          className="button button--primary"
          aria-label="Add repository"
          disabled={busy || !live}
        >
          {busy ? 'Adding…' : 'Add'}
        </button>
      </div>
      {added && (
        <p className="add-repo__added" role="status">
          {added}
        </p>
      )}
      {error && (
        <p className="add-repo__error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
