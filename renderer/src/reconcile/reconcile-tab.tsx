// The Reconciliation tab: the base branch the "affected" figures compare against (applied with
// setReconcileBase), the totals, the specs (the system spec first, its subsystems nested) with
// their governed, changed and affected counts, last reconciliation and drift score (NotarAI 0.7's
// `score`, with its word), the specs that failed to load (file, line, message), one selected
// spec's detail (spec-detail.tsx), and Clear cache / Snapshot state (cache-actions.tsx).
// Everything shown comes from the mirrored store (reconcile-state events): counts move live. The
// selected spec is kept in the store too, so it survives switching tabs or worktrees.
import { useId, useState, type FormEvent } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import { count as formatCount, plural, relativeTime } from '../common/format.ts';
import { useHostState, useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { useNow } from '../common/use-now.ts';
import { specRows, type SpecRow } from './reconcile-format.ts';
import { SpecDetail } from './spec-detail.tsx';
import { CacheActions } from './cache-actions.tsx';
import { WorktreeDecisions } from './decisions-panel.tsx';
import { DriftWord } from '../common/drift-word.tsx';

export function ReconcileTab({
  worktree,
  live,
  revealSpec = null,
}: {
  worktree: WorktreeState;
  live: boolean;
  /** A spec opened from another tab (a Coverage finding's link): its detail scrolls into view. */
  revealSpec?: string | null;
}) {
  const store = useHostStore();
  const { snapshot, selectedSpecs } = useHostState();
  const state = snapshot?.reconcile[worktree.id];
  const selectedPath = selectedSpecs[worktree.id];
  // The spec the user picked in this visit of the tab: its detail scrolls into view.
  const [revealed, setRevealed] = useState<string | null>(revealSpec);

  if (!state) {
    return (
      <div className="empty" role="status">
        <span className="spinner" aria-hidden="true" />
        <p className="empty__title">Computing the reconciliation state…</p>
        <p className="empty__detail">
          Grove reads the specs under .notarai/ and compares their files with the hash cache.
        </p>
      </div>
    );
  }

  const rows = specRows(state.specs);
  const selected =
    rows.find((row) => row.spec.path === selectedPath)?.spec ?? rows[0]?.spec ?? null;

  return (
    <div className="reconcile stack">
      {/* Keyed by the base: the field follows the host's base when it changes. */}
      <BaseBranch key={state.base} worktree={worktree} state={state} live={live} />
      <Totals state={state} />
      <SnapshotNote state={state} />
      {state.warnings.map((warning) => (
        <p key={warning} className="notice">
          {warning}
        </p>
      ))}
      <SpecErrors state={state} />
      {rows.length === 0 ? (
        state.specErrors.length === 0 && (
          <div className="empty" role="status">
            <p className="empty__title">No specs in this worktree</p>
            <p className="empty__detail">
              Add NotarAI specs as .notarai/*.spec.yaml files to track what they govern.
            </p>
          </div>
        )
      ) : (
        <div className="reconcile__specs">
          <SpecTable
            rows={rows}
            selectedPath={selected?.path ?? null}
            onSelect={(path) => {
              store.selectSpec(worktree.id, path);
              setRevealed(path);
            }}
            baseError={state.baseError}
            proposed={
              new Map(state.decisions?.bySpec.map((spec) => [spec.specPath, spec.proposed]) ?? [])
            }
          />
          {selected && (
            <SpecDetail
              key={selected.path}
              worktree={worktree}
              spec={selected}
              base={state.base}
              baseError={state.baseError}
              snapshotCommit={state.snapshot?.gitHash ?? null}
              live={live}
              reveal={revealed === selected.path}
            />
          )}
        </div>
      )}
      <WorktreeDecisions worktree={worktree} base={state.base} live={live} />
      <CacheActions worktree={worktree} live={live} />
    </div>
  );
}

function BaseBranch({
  worktree,
  state,
  live,
}: {
  worktree: WorktreeState;
  state: ReconcileState;
  live: boolean;
}) {
  const store = useHostStore();
  const inputId = useId();
  const errorId = useId();
  const [value, setValue] = useState(state.base);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const apply = async (base: string | null): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await store.commands.setReconcileBase({ worktreeId: worktree.id, base });
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    const trimmed = value.trim();
    void apply(trimmed === '' ? null : trimmed);
  };

  const problem = error ?? state.baseError;
  return (
    <form className="card reconcile-base" onSubmit={submit} aria-label="Reconciliation base">
      <div className="reconcile-base__row">
        <label htmlFor={inputId} className="reconcile-base__label">
          Base branch
        </label>
        <input
          id={inputId}
          className="input"
          type="text"
          spellCheck={false}
          autoComplete="off"
          value={value}
          placeholder="the repository's default branch"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? errorId : undefined}
          onChange={(event) => setValue(event.target.value)}
          disabled={busy}
        />
        <button
          type="submit"
          className="button"
          disabled={busy || !live || value.trim() === state.base}
          aria-label="Apply base branch"
        >
          Apply
        </button>
        {worktree.reconcileBase !== null && (
          <button
            type="button"
            className="button button--quiet"
            disabled={busy || !live}
            onClick={() => void apply(null)}
          >
            Use the default branch
          </button>
        )}
      </div>
      <p className="muted reconcile-base__hint">
        {state.baseError !== null
          ? `Not comparing: ${state.base} cannot be used. Enter another branch, or use the default.`
          : worktree.reconcileBase === null
            ? `Comparing against ${state.base}, the repository's default branch.`
            : `Comparing against ${state.base}.`}
      </p>
      {problem && (
        <p id={errorId} className="notice notice--error" role="alert">
          {error ? error : `The base cannot be used: ${state.baseError}`}
        </p>
      )}
    </form>
  );
}

function Totals({ state }: { state: ReconcileState }) {
  const t = state.totals;
  // Without a usable base the figures against it are unknown, as the table's "—" says.
  const vsBase = (count: number): number | null => (state.baseError === null ? count : null);
  const items: [string, number | null][] = [
    ['Specs', t.specs],
    ['To reconcile', t.specsNeedingReconciliation],
    ['Affected vs base', vsBase(t.affectedSpecs)],
    ['Governed files', t.governedFiles],
    ['Changed since reconciled', t.changedSinceReconciled],
    ['Changed vs base', vsBase(t.changedVsBase)],
    ['Invalid specs', t.invalidSpecs],
    ['Decisions proposed', state.decisions?.proposed ?? 0],
  ];
  return (
    <dl className="reconcile-totals" aria-label="Reconciliation totals">
      {items.map(([label, count]) => (
        <div
          key={label}
          className={
            count !== null &&
            count > 0 &&
            (label === 'To reconcile' ||
              label === 'Invalid specs' ||
              label === 'Decisions proposed')
              ? 'reconcile-totals__item reconcile-totals__item--attention'
              : 'reconcile-totals__item'
          }
        >
          <dt>{label}</dt>
          <dd
            title={
              count === null
                ? 'The base cannot be used'
                : label === 'Changed since reconciled'
                  ? "Against this machine's marks (its hash cache), and the committed snapshot for files not marked here"
                  : undefined
            }
          >
            {count === null ? '—' : formatCount(count)}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** What the state compares against, in words: the committed snapshot, when there is one. */
function SnapshotNote({ state }: { state: ReconcileState }) {
  const { snapshot } = state;
  if (!snapshot) return null;
  const when = snapshot.at === null ? 'undated' : `of ${new Date(snapshot.at).toLocaleString()}`;
  const where = [snapshot.branch, snapshot.gitHash?.slice(0, 10)].filter(Boolean).join(' at ');
  const changed = state.totals.changedSinceReconciled;
  return (
    <p className="muted" role="note">
      Reconciled files come from this machine's hash cache and, for the rest, the committed snapshot{' '}
      {when}
      {where ? ` (${where})` : ''}:{' '}
      {changed === 0 ? 'no governed file' : plural(changed, 'governed file')} changed since.
    </p>
  );
}

function SpecErrors({ state }: { state: ReconcileState }) {
  const headingId = useId();
  if (state.specErrors.length === 0) return null;
  return (
    <section className="spec-errors" aria-labelledby={headingId}>
      <h3 id={headingId}>{plural(state.specErrors.length, 'invalid spec')}</h3>
      <ul>
        {state.specErrors.map((error, index) => (
          <li key={`${error.file}:${error.line ?? ''}:${index}`} className="spec-errors__item">
            <code className="spec-errors__where">
              {error.file}
              {error.line !== null && `:${error.line}`}
            </code>
            <span className="spec-errors__message">{error.message}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function SpecTable({
  rows,
  selectedPath,
  onSelect,
  baseError,
  proposed,
}: {
  rows: SpecRow[];
  selectedPath: string | null;
  onSelect(path: string): void;
  baseError: string | null;
  /** Decision proposals awaiting a person, by spec path. */
  proposed: ReadonlyMap<string, number>;
}) {
  const now = useNow();
  return (
    <div className="table-wrap spec-table-wrap">
      <table className="table spec-table" aria-label="Specs">
        <thead>
          <tr>
            <th scope="col">Spec</th>
            <th scope="col" className="num">
              Governed
            </th>
            <th scope="col" className="num">
              Changed
            </th>
            <th scope="col">Affected</th>
            <th scope="col">Last reconciled</th>
            <th scope="col">Drift</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ spec, depth }) => {
            const selected = spec.path === selectedPath;
            return (
              <tr
                key={spec.path}
                className={[
                  'spec-row',
                  selected ? 'spec-row--selected' : '',
                  depth === 1 ? 'spec-row--subsystem' : '',
                ]
                  .filter(Boolean)
                  .join(' ')}
              >
                <th scope="row">
                  <div className="spec-row__cell">
                    <button
                      type="button"
                      className="spec-row__button"
                      aria-pressed={selected}
                      onClick={() => onSelect(spec.path)}
                    >
                      <code className="spec-row__path">{spec.path}</code>
                      <span className="spec-row__title">{spec.title}</span>
                      {spec.driftReason && (
                        <span className="spec-row__reason">{spec.driftReason}</span>
                      )}
                    </button>
                    {spec.isSystemSpec && <span className="tag">system</span>}
                    {depth === 1 && <span className="tag tag--quiet">subsystem</span>}
                    {spec.specInvalidated && <span className="tag tag--warn">spec changed</span>}
                    {(proposed.get(spec.path) ?? 0) > 0 && (
                      <span className="tag" title="Decision proposals awaiting a person">
                        {plural(proposed.get(spec.path) ?? 0, 'decision')} proposed
                      </span>
                    )}
                  </div>
                </th>
                <td className="num">{formatCount(spec.governedFiles)}</td>
                <td
                  className={
                    spec.changedSinceReconciled > 0 ? 'num spec-row__changed--some' : 'num'
                  }
                >
                  {formatCount(spec.changedSinceReconciled)}
                </td>
                <td>
                  {baseError !== null
                    ? '—'
                    : spec.affected
                      ? plural(spec.affectedFiles, 'file')
                      : 'no'}
                </td>
                <td title={spec.lastReconciledAt ? new Date(spec.lastReconciledAt).toString() : ''}>
                  {spec.lastReconciledAt === null
                    ? 'never'
                    : spec.reconciledBy === 'snapshot'
                      ? `${relativeTime(spec.lastReconciledAt, now)} (snapshot)`
                      : relativeTime(spec.lastReconciledAt, now)}
                </td>
                <td>
                  {spec.drift ? (
                    <DriftWord score={spec.drift.score} status={spec.drift.status} />
                  ) : (
                    <span title="Not scored yet">—</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
