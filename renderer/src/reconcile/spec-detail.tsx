// One spec's detail in the Reconciliation tab, a review: its files changed since reconciled first
// (get_spec_diff with Grove's review details and the window's rule, so the list is every file the
// state counts), as a folder tree with counts, statuses and a path filter (file-tree.tsx, a
// virtualised list), the selected file's diff beside it (file-diff-pane.tsx), j/k between files.
// "Viewed" per file as in a pull-request review: the main action marks the viewed files; a mark
// covering files nobody viewed, or more than a handful, asks first (mark-dialog.tsx); the last
// mark can be undone (undoMark: the cache rows it replaced come back). Then the spec's decision
// proposals (decisions-panel.tsx: a related file the review lists opens there), the drift score's
// terms (drift-terms.tsx) and the spec's own text, folded (spec-text.tsx).
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import type { SpecReconcileState } from '../../../shared/reconcile.ts';
import type { SpecDiffResult } from '../../../shared/reconcile-results.ts';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { DriftWord } from '../common/drift-word.tsx';
import { getSpecDiff, markReconciled, undoMark } from './reconcile-calls.ts';
import {
  counted,
  filterFiles,
  markPlan,
  reviewFiles,
  splitDiff,
  STATUS_LABEL,
  treeRows,
  type MarkPlan,
  type TreeRow,
} from './review-files.ts';
import { FileTree } from './file-tree.tsx';
import { FileDiffPane, type SnapshotDiffLoad } from './file-diff-pane.tsx';
import { MarkDialog } from './mark-dialog.tsx';
import { DriftSection } from './drift-terms.tsx';
import { SpecText } from './spec-text.tsx';
import { SpecDecisions } from './decisions-panel.tsx';

type DiffLoad =
  | { state: 'loading' }
  | { state: 'ready'; diff: SpecDiffResult }
  | { state: 'error'; message: string };

type MarkOutcome = {
  kind: 'ok' | 'error';
  text: string;
  rejected?: string[];
  /** The mark Undo reverts (only the worktree's last mark can be). */
  markId?: string;
};

export interface SpecDetailProps {
  worktree: WorktreeState;
  spec: SpecReconcileState;
  base: string;
  baseError: string | null;
  /** The commit of the committed snapshot (.notarai/reconciliation_state.json), if any. */
  snapshotCommit: string | null;
  live: boolean;
  /** The user just picked this spec: bring the detail into view (it sits below the table). */
  reveal?: boolean;
}

const count = (n: number): string => n.toLocaleString('en-US');
/** The changed files a mark covers (the spec file it adds aside). */
const changedIn = (plan: MarkPlan): number => plan.files.length - (plan.withSpec ? 1 : 0);

export function SpecDetail({
  worktree,
  spec,
  base,
  baseError,
  snapshotCommit,
  live,
  reveal = false,
}: SpecDetailProps) {
  const sectionRef = useRef<HTMLElement>(null);
  const reviewRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!reveal) return;
    // After the commit's other effects (the tab that opened it takes focus, which scrolls too).
    const frame = requestAnimationFrame(() =>
      sectionRef.current?.scrollIntoView({ block: 'start' }),
    );
    return () => cancelAnimationFrame(frame);
  }, [reveal]);
  const store = useHostStore();
  const headingId = useId();
  const filterId = useId();
  const markHintId = useId();
  const running = worktree.status.state === 'running';
  const [load, setLoad] = useState<DiffLoad>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  const [filter, setFilter] = useState('');
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [selectedPath, setSelectedPath] = useState<string | null>(null);
  // Viewed files, each with the diff it was viewed at: a file that changes again is not viewed.
  const [viewedAt, setViewedAt] = useState<ReadonlyMap<string, string>>(new Map());
  // Files whose diff this visit showed (the mark's question says how many never were).
  const shown = useRef(new Set<string>());
  const [asking, setAsking] = useState<MarkPlan | null>(null);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<MarkOutcome | null>(null);

  // Ask again whenever what the review depends on changes (files edited, marked, base moved).
  const diffKey = [
    spec.path,
    base,
    spec.changedSinceReconciled,
    spec.specInvalidated,
    spec.affectedFiles,
    spec.lastReconciledAt,
    ...spec.changedSinceReconciledPaths,
    ...spec.affectedPaths,
  ].join('\n');

  useEffect(() => {
    if (!running || baseError !== null) return;
    let cancelled = false;
    getSpecDiff(store.commands, worktree.id, spec.path, base, { review: true }).then(
      (diff) => {
        if (!cancelled) setLoad({ state: 'ready', diff });
      },
      (error: unknown) => {
        if (!cancelled) setLoad({ state: 'error', message: errorText(error) });
      },
    );
    return () => {
      cancelled = true;
    };
    // diffKey stands for spec, base and the counts.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [store, worktree.id, worktree.port, running, diffKey, baseError, generation]);

  const diff = load.state === 'ready' ? load.diff : null;
  const files = useMemo(() => (diff ? reviewFiles(diff) : []), [diff]);
  const parts = useMemo(() => splitDiff(diff?.diff ?? ''), [diff]);
  const specContents = useMemo(
    () => new Map((diff?.spec_changes ?? []).map((change) => [change.path, change.content])),
    [diff],
  );
  const visible = useMemo(() => filterFiles(files, filter), [files, filter]);
  const rows = useMemo(() => treeRows(visible, collapsed), [visible, collapsed]);
  const firstFile =
    rows.find((row): row is Extract<TreeRow, { kind: 'file' }> => row.kind === 'file')?.file ??
    null;
  const selected = visible.find((file) => file.path === selectedPath) ?? firstFile;
  const signature = (path: string): string => parts.get(path) ?? specContents.get(path) ?? '';
  const viewed = useMemo(() => {
    const set = new Set<string>();
    for (const [path, at] of viewedAt) {
      if ((parts.get(path) ?? specContents.get(path) ?? '') === at) set.add(path);
    }
    return set;
  }, [viewedAt, parts, specContents]);

  const selectedShown = selected?.path ?? null;
  useEffect(() => {
    if (selectedShown !== null) shown.current.add(selectedShown);
  }, [selectedShown]);

  // The diff vs the snapshot's commit, for a selected file the same as the base.
  const needSnapshot =
    running &&
    snapshotCommit !== null &&
    selected !== null &&
    selected.status === 'unchanged' &&
    !selected.neverReconciled &&
    !selected.binary &&
    !selected.specFile;
  const snapshotKey = `${snapshotCommit ?? ''}\n${diffKey}`;
  const [snapshotAnswer, setSnapshotAnswer] = useState<{
    key: string;
    load: SnapshotDiffLoad;
  } | null>(null);
  const snapshot: SnapshotDiffLoad = !needSnapshot
    ? { state: 'none' }
    : snapshotAnswer?.key === snapshotKey
      ? snapshotAnswer.load
      : { state: 'loading' };
  useEffect(() => {
    if (!needSnapshot || snapshotCommit === null || snapshotAnswer?.key === snapshotKey) return;
    let cancelled = false;
    getSpecDiff(store.commands, worktree.id, spec.path, snapshotCommit).then(
      (answer) => {
        if (cancelled) return;
        setSnapshotAnswer({
          key: snapshotKey,
          load: { state: 'ready', parts: splitDiff(answer.diff) },
        });
      },
      (error: unknown) => {
        if (cancelled) return;
        setSnapshotAnswer({
          key: snapshotKey,
          load: { state: 'error', message: errorText(error) },
        });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [store, worktree.id, spec.path, snapshotCommit, snapshotKey, needSnapshot, snapshotAnswer]);

  const markable = files.filter((file) => file.markable);
  // `seen`: the files shown so far, known in event handlers (the labels need no more).
  const planFor = (chosen: ReadonlySet<string>, seen: ReadonlySet<string>): MarkPlan =>
    markPlan({
      files,
      chosen,
      viewed,
      shown: seen,
      specPath: spec.path,
      specInvalidated: spec.specInvalidated,
    });
  const everyFile = new Set(markable.map((file) => file.path));
  const viewedPlan = planFor(viewed, new Set());
  const allPlan = planFor(everyFile, new Set());

  const runMark = async (plan: MarkPlan): Promise<void> => {
    setAsking(null);
    setBusy(true);
    setOutcome(null);
    try {
      const result = await markReconciled(store.commands, worktree.id, plan.files);
      setViewedAt(new Map());
      const after = plan.withSpec
        ? ''
        : spec.specInvalidated
          ? ' The spec itself changed and is not marked: mark every changed file to mark the spec with them.'
          : ' "Last reconciled" is when the spec itself was marked: that happens when a mark covers every changed file.';
      setOutcome({
        kind: result.rejected.length > 0 ? 'error' : 'ok',
        text: `Marked ${counted(result.updated, 'file')} reconciled.${after}`,
        rejected: result.rejected.map((r) => `${r.path}: ${r.reason}`),
        ...(result.mark_id ? { markId: result.mark_id } : {}),
      });
    } catch (error) {
      setOutcome({ kind: 'error', text: errorText(error) });
    } finally {
      setBusy(false);
    }
  };
  const startMark = (chosen: ReadonlySet<string>): void => {
    const plan = planFor(chosen, shown.current);
    if (plan.ask) setAsking(plan);
    else void runMark(plan);
  };

  const undo = async (markId: string): Promise<void> => {
    setBusy(true);
    try {
      const result = await undoMark(store.commands, worktree.id, markId);
      setOutcome({
        kind: 'ok',
        text: `Mark undone: ${counted(result.restored, 'cache row')} restored, ${counted(
          result.deleted,
          'row',
        )} the mark had added removed.`,
      });
    } catch (error) {
      setOutcome({ kind: 'error', text: `Could not undo: ${errorText(error)}` });
    } finally {
      setBusy(false);
    }
  };

  const toggleViewed = (path: string): void => {
    setViewedAt((previous) => {
      const next = new Map(previous);
      if (viewed.has(path)) next.delete(path);
      else next.set(path, signature(path));
      return next;
    });
  };
  const toggleFolder = (path: string): void => {
    setCollapsed((previous) => {
      const next = new Set(previous);
      if (next.has(path)) next.delete(path);
      else next.add(path);
      return next;
    });
  };

  const byStatus = new Map<string, number>();
  for (const file of files) byStatus.set(file.status, (byStatus.get(file.status) ?? 0) + 1);
  const deleted = files.length - markable.length;
  // The review answers for an older state while the state already moved (a mark, an edit).
  const stale = diff !== null && markable.length !== spec.changedSinceReconciled;
  const disabled = busy || !live || !running;

  return (
    <section
      ref={sectionRef}
      className="spec-detail card"
      aria-labelledby={headingId}
      tabIndex={-1}
    >
      <header className="spec-detail__header">
        <h3 id={headingId}>
          <code>{spec.path}</code>
        </h3>
        {spec.isSystemSpec && <span className="tag">system spec</span>}
        <span className="tag tag--quiet">{spec.tier}</span>
        {spec.specInvalidated && <span className="tag tag--warn">spec changed</span>}
        {spec.drift && <DriftWord score={spec.drift.score} status={spec.drift.status} />}
      </header>
      <p className="spec-detail__title muted">{spec.title}</p>

      <div className="review-head">
        <h4 className="spec-detail__subheading">
          Changed since reconciled ({count(spec.changedSinceReconciled)})
        </h4>
        {diff && (
          <span className="muted review-head__counts">
            {[...byStatus]
              .map(([status, n]) => `${count(n)} ${STATUS_LABEL[status as 'added'].words}`)
              .join(' · ')}
            {deleted > 0 && ` (a deletion vs ${base} cannot be marked)`}
          </span>
        )}
        {running && baseError === null && (
          <button
            type="button"
            className="button button--quiet button--small"
            aria-label="Refresh the review"
            onClick={() => {
              setLoad({ state: 'loading' });
              setGeneration((n) => n + 1);
            }}
          >
            Refresh
          </button>
        )}
      </div>

      <ReviewBody load={load} running={running} baseError={baseError} spec={spec} stale={stale} />

      {diff && files.length > 0 && (
        <>
          <div className="review-filter">
            <label htmlFor={filterId} className="visually-hidden">
              Filter files by path
            </label>
            <input
              id={filterId}
              className="input review-filter__input"
              type="search"
              placeholder="Filter by path"
              spellCheck={false}
              autoComplete="off"
              value={filter}
              onChange={(event) => setFilter(event.target.value)}
            />
            <span className="muted" role="status">
              {filter.trim() === ''
                ? `${count(files.length)} ${files.length === 1 ? 'file' : 'files'}`
                : `${count(visible.length)} of ${count(files.length)} files match`}
              {' · '}
              {count(viewed.size)} viewed · j/k or arrows move, v ticks Viewed
            </span>
          </div>
          <div className="review" ref={reviewRef}>
            <div className="review__list">
              {rows.length === 0 ? (
                <p className="empty-inline">No file matches “{filter}”.</p>
              ) : (
                <FileTree
                  rows={rows}
                  selected={selected?.path ?? null}
                  viewed={viewed}
                  label={`Files of ${spec.path}`}
                  onSelect={setSelectedPath}
                  onToggleViewed={toggleViewed}
                  onToggleFolder={toggleFolder}
                />
              )}
            </div>
            <div className="review__diff">
              <FileDiffPane
                file={selected}
                chunk={selected ? parts.get(selected.path) : undefined}
                base={base}
                snapshotCommit={snapshotCommit}
                snapshot={snapshot}
                specContent={selected ? specContents.get(selected.path) : undefined}
              />
            </div>
          </div>
        </>
      )}

      <div className="button-row">
        <button
          type="button"
          className="button button--primary"
          disabled={disabled || viewedPlan.files.length === 0}
          aria-describedby={markHintId}
          onClick={() => startMark(viewed)}
        >
          {busy
            ? 'Marking…'
            : viewed.size === 0
              ? 'Mark viewed reconciled'
              : `Mark ${count(changedIn(viewedPlan))} viewed reconciled`}
        </button>
        <button
          type="button"
          className="button"
          disabled={disabled || allPlan.files.length === 0 || diff === null}
          onClick={() => startMark(everyFile)}
        >
          Mark all {count(changedIn(allPlan))}…
        </button>
        <span id={markHintId} className="muted">
          {viewedPlan.files.length === 0
            ? 'tick Viewed on the files you reviewed'
            : viewedPlan.withSpec
              ? 'every changed file is viewed: the spec file is marked with them'
              : `${counted(markable.length - viewedPlan.files.length, 'changed file')} left`}
        </span>
      </div>
      {asking && (
        <MarkDialog
          plan={asking}
          onConfirm={() => void runMark(asking)}
          onCancel={() => setAsking(null)}
        />
      )}
      {outcome && (
        <div
          className={outcome.kind === 'error' ? 'notice notice--error' : 'notice'}
          role={outcome.kind === 'error' ? 'alert' : 'status'}
        >
          <p>
            {outcome.text}{' '}
            {outcome.markId !== undefined && (
              <button
                type="button"
                className="button button--small"
                disabled={disabled}
                onClick={() => void undo(outcome.markId!)}
              >
                Undo
              </button>
            )}
          </p>
          {outcome.rejected && outcome.rejected.length > 0 && (
            <ul>
              {outcome.rejected.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          )}
        </div>
      )}

      <SpecDecisions
        worktree={worktree}
        specPath={spec.path}
        base={base}
        live={live}
        showInReview={(file) => {
          // A related file the review lists: select it there, its diff beside the list.
          if (!files.some((candidate) => candidate.path === file)) return false;
          setFilter('');
          setSelectedPath(file);
          reviewRef.current?.scrollIntoView({ block: 'nearest' });
          return true;
        }}
      />
      <DriftSection worktree={worktree} spec={spec} running={running} diffKey={diffKey} />
      <SpecText spec={spec} />
    </section>
  );
}

/** What the review says around its list: loading, errors, the spec's own change, nothing left. */
function ReviewBody({
  load,
  running,
  baseError,
  spec,
  stale,
}: {
  load: DiffLoad;
  running: boolean;
  baseError: string | null;
  spec: SpecReconcileState;
  stale: boolean;
}) {
  const fallback = spec.changedSinceReconciledPaths;
  const list =
    fallback.length > 0 ? (
      <p className="muted">
        {fallback.length < spec.changedSinceReconciled
          ? `The first ${count(fallback.length)} of ${count(spec.changedSinceReconciled)}: `
          : ''}
        {fallback.join(', ')}
      </p>
    ) : null;
  if (!running) {
    return (
      <>
        <p className="empty-inline" role="status">
          Start the server on the Server tab to review the changes.
        </p>
        {list}
      </>
    );
  }
  if (baseError !== null) {
    return (
      <>
        <p className="empty-inline" role="status">
          No review: the base cannot be used.
        </p>
        {list}
      </>
    );
  }
  if (load.state === 'loading') {
    return (
      <p className="empty-inline" role="status">
        <span className="spinner spinner--small" aria-hidden="true" /> Loading the changes…
      </p>
    );
  }
  if (load.state === 'error') {
    return (
      <>
        <p className="notice notice--error" role="alert">
          Could not get the changes: {load.message}
        </p>
        {list}
      </>
    );
  }
  const { diff } = load;
  // Nothing left to mark (deletions vs the base may still be listed: they cannot be marked).
  const empty = diff.files.length + diff.spec_changes.length === 0;
  return (
    <>
      {(diff.warnings ?? []).map((warning) => (
        <p key={warning} className="notice">
          {warning}
        </p>
      ))}
      {stale && (
        <p className="muted" role="status">
          <span className="spinner spinner--small" aria-hidden="true" /> The files changed
          meanwhile: updating the list…
        </p>
      )}
      {diff.spec_invalidated.length > 0 && (
        <p className="notice">
          The spec itself changed after {counted(diff.spec_invalidated.length, 'file')} were last
          reconciled; review them against it (marking the spec with them clears this).
        </p>
      )}
      {empty && !stale && spec.changedSinceReconciled === 0 && (
        <p className="empty-inline">
          {spec.specInvalidated
            ? 'Every governed file is reconciled; the spec itself changed since: mark it.'
            : 'Every governed file is reconciled.'}
        </p>
      )}
    </>
  );
}
