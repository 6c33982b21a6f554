// The sidebar: every open repository with its worktrees (branch, status dot, connected clients,
// drifted specs, the overall drift status as a word, "moved" when another program took its port,
// the path as a tooltip), a way to remove a repository, and the "Add repository" field. Names show
// whole (they wrap); the counts sit on a line of their own, in words. Arrow keys move between
// worktrees; Enter or Space selects one. A repository's Remove button comes after its worktrees in
// the Tab order (never the first stop).
import { useId, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import type { HostSnapshot, RepoState, WorktreeState } from '../../../shared/model.ts';
import { connectedClientCount } from '../../../shared/clients.ts';
import { count, plural } from '../common/format.ts';
import { useNow } from '../common/use-now.ts';
import { statusLabel, StatusDot } from './server-status.tsx';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { ConfirmDialog } from '../common/confirm-dialog.tsx';
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
      <h2 id={headingId} className="repo-group__name" title={repo.path}>
        {repo.name}
      </h2>
      {repo.worktrees.length === 0 ? (
        <p className="sidebar__empty repo-group__body">No worktrees found.</p>
      ) : (
        <ul className="worktree-list repo-group__body">
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
      {/* After the worktrees in the DOM (the Tab order), beside the name on screen. */}
      <button
        type="button"
        className="icon-button repo-group__remove"
        aria-label={`Remove repository ${repo.name}`}
        title="Remove repository"
        disabled={!live}
        onClick={() => setConfirming(true)}
      >
        ×
      </button>
      {confirming && (
        <ConfirmDialog
          title={`Remove ${repo.name}?`}
          confirmLabel="Remove"
          busyLabel="Removing…"
          busy={busy}
          onConfirm={() => void remove()}
          onCancel={() => setConfirming(false)}
        >
          <p>
            Grove stops its {plural(repo.worktrees.length, 'server')} and forgets the repository.
            Nothing in {repo.path} is changed; you can add it again.
          </p>
        </ConfirmDialog>
      )}
      {error && (
        <p className="sidebar__error repo-group__body" role="alert">
          {error}
        </p>
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
  const hasCounts = clients > 0 || drifted > 0 || drift !== null || moved;
  return (
    <>
      <button
        type="button"
        data-worktree-item=""
        className={selected ? 'worktree-item worktree-item--selected' : 'worktree-item'}
        aria-current={selected ? 'page' : undefined}
        aria-describedby={descriptionId}
        title={`${name}\n${worktree.path}`}
        onClick={() => onSelect(worktree.id)}
      >
        <span className="worktree-item__line">
          <StatusDot status={worktree.status} known={live} />
          <span
            className={
              worktree.branch === null ? 'worktree-item__name detached' : 'worktree-item__name'
            }
          >
            {name}
          </span>
        </span>
        {/* Said in words by the description below; shown in words too, never a bare number. */}
        {hasCounts && (
          <span className="worktree-item__counts" aria-hidden="true">
            {clients > 0 && (
              <span className="count" title="Clients connected now">
                {count(clients)} {clients === 1 ? 'client' : 'clients'}
              </span>
            )}
            {drifted > 0 && (
              <span className="count count--drift" title="Specs to reconcile">
                {count(drifted)} to reconcile
              </span>
            )}
            {moved && (
              <span
                className="worktree-item__moved"
                title={`Port moved: ${worktree.movedFromPort} was in use, now ${worktree.port}`}
              >
                moved
              </span>
            )}
            {drift && <DriftWord score={drift.score} status={drift.status} showScore={false} />}
          </span>
        )}
      </button>
      <span id={descriptionId} className="visually-hidden">
        {statusLabel(worktree.status, now, live)}, {plural(clients, 'connected client')}
        {drifted > 0 && `, ${plural(drifted, 'spec')} to reconcile`}
        {drift && `, ${driftDescription(drift.score, drift.status)}`}
        {moved && `, port moved from ${worktree.movedFromPort} to ${worktree.port}`},{' '}
        {worktree.path}
      </span>
    </>
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
