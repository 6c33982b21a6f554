// One spec's detail in the Reconciliation tab: its intent, its files changed since they were
// last reconciled (with checkboxes to pick some), "Mark reconciled" (the picked files, or all of
// them) and its diff vs the base, asked from get_spec_diff through the tool console. Counts and
// paths come from the mirrored store; only the diff and the mark are tool calls. Every file in the
// "changed since reconciled" list gets its changes shown: vs the base when it differs from it, else
// vs the committed snapshot's commit (what was reconciled there), else it says why there is none.
import { useEffect, useId, useRef, useState } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import type { SpecReconcileState } from '../../../shared/reconcile.ts';
import { plural } from '../common/format.ts';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { DiffView } from './diff-view.tsx';
import { SpecDecisions } from './decisions-panel.tsx';
import type { SpecDiffResult } from '../../../shared/reconcile-results.ts';
import { getSpecDiff, markReconciled } from './reconcile-calls.ts';
import { filesToMark } from './reconcile-format.ts';

type DiffLoad =
  | { state: 'loading' }
  | { state: 'ready'; diff: SpecDiffResult }
  | { state: 'error'; message: string };

type MarkOutcome = { kind: 'ok' | 'error'; text: string; rejected?: string[] };

/** The diff vs the committed snapshot's commit of the listed files the base diff does not show. */
type SnapshotDiffLoad =
  | { state: 'none' }
  | { state: 'loading' }
  | { state: 'ready'; diff: string }
  | { state: 'error'; message: string };

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
  useEffect(() => {
    if (reveal) sectionRef.current?.scrollIntoView({ block: 'start', behavior: 'smooth' });
  }, [reveal]);
  const store = useHostStore();
  const headingId = useId();
  const filesHeadingId = useId();
  const markHintId = useId();
  const running = worktree.status.state === 'running';
  const [load, setLoad] = useState<DiffLoad>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<MarkOutcome | null>(null);

  const changedPaths = spec.changedSinceReconciledPaths;
  // Ask again whenever what the diff depends on changes (files edited, marked, base moved).
  const diffKey = [
    spec.path,
    base,
    spec.changedSinceReconciled,
    spec.specInvalidated,
    spec.affectedFiles,
    ...changedPaths,
    ...spec.affectedPaths,
  ].join('\n');

  useEffect(() => {
    if (!running || baseError !== null) return;
    let cancelled = false;
    getSpecDiff(store.commands, worktree.id, spec.path, base).then(
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

  // Listed files whose change the base diff does not show (no difference from the base).
  const notInBaseDiff =
    load.state === 'ready'
      ? changedPaths.filter(
          (file) =>
            !file.endsWith('.spec.yaml') &&
            !load.diff.binary_changes.includes(file) &&
            !diffedPaths(load.diff.diff).has(file),
        )
      : [];
  const [snapshotAnswer, setSnapshotAnswer] = useState<{
    key: string;
    load: SnapshotDiffLoad;
  } | null>(null);
  const snapshotKey = [snapshotCommit ?? '', ...notInBaseDiff].join('\n');
  const wantSnapshotDiff = running && snapshotCommit !== null && notInBaseDiff.length > 0;
  const snapshotDiff: SnapshotDiffLoad = !wantSnapshotDiff
    ? { state: 'none' }
    : snapshotAnswer?.key === snapshotKey
      ? snapshotAnswer.load
      : { state: 'loading' };
  useEffect(() => {
    if (!wantSnapshotDiff || snapshotCommit === null) return;
    let cancelled = false;
    const wanted = new Set(snapshotKey.split('\n').slice(1));
    getSpecDiff(store.commands, worktree.id, spec.path, snapshotCommit).then(
      (diff) => {
        if (cancelled) return;
        const load: SnapshotDiffLoad = { state: 'ready', diff: diffOf(diff.diff, wanted) };
        setSnapshotAnswer({ key: snapshotKey, load });
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
  }, [store, worktree.id, spec.path, snapshotCommit, snapshotKey, wantSnapshotDiff]);

  const plan = filesToMark(spec, picked, load.state === 'ready' ? load.diff.files : null);
  const toMark = plan.files;

  const mark = async (): Promise<void> => {
    setBusy(true);
    setOutcome(null);
    try {
      const result = await markReconciled(store.commands, worktree.id, toMark);
      setPicked(new Set());
      // Say at once what the mark did not change, so the next notice does not contradict it.
      const specMarked = toMark.includes(spec.path);
      const after = specMarked
        ? ''
        : spec.specInvalidated
          ? ' The spec itself changed and is not marked: files reconciled before it changed still need a review against it. Mark with nothing selected to mark the spec with them.'
          : ' "Last reconciled" is when the spec itself was marked; it stays until you mark the spec (Mark reconciled with nothing selected).';
      setOutcome({
        kind: result.rejected.length > 0 ? 'error' : 'ok',
        text: `Marked ${plural(result.updated, 'file')} reconciled.${after}`,
        rejected: result.rejected.map((r) => `${r.path}: ${r.reason}`),
      });
    } catch (error) {
      setOutcome({ kind: 'error', text: errorText(error) });
    } finally {
      setBusy(false);
    }
  };

  const toggle = (file: string): void => {
    setPicked((previous) => {
      const next = new Set(previous);
      if (next.has(file)) next.delete(file);
      else next.add(file);
      return next;
    });
  };

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
      </header>

      <h4 id={filesHeadingId} className="spec-detail__subheading">
        Changed since reconciled ({spec.changedSinceReconciled})
      </h4>
      {changedPaths.length === 0 ? (
        <p className="empty-inline">Every governed file is reconciled.</p>
      ) : (
        <ul className="changed-files" aria-labelledby={filesHeadingId}>
          {changedPaths.map((file) => (
            <li key={file}>
              <label className="changed-files__item">
                <input type="checkbox" checked={picked.has(file)} onChange={() => toggle(file)} />
                <code>{file}</code>
              </label>
            </li>
          ))}
          {spec.changedSinceReconciled > changedPaths.length && (
            <li className="muted">and {spec.changedSinceReconciled - changedPaths.length} more</li>
          )}
        </ul>
      )}
      <div className="button-row">
        <button
          type="button"
          className="button button--primary"
          disabled={busy || !live || !running || toMark.length === 0}
          aria-describedby={markHintId}
          onClick={() => void mark()}
        >
          {busy ? 'Marking…' : 'Mark reconciled'}
        </button>
        <span id={markHintId} className="muted">
          {toMark.length === 0
            ? 'nothing to mark'
            : !plan.all
              ? `the ${plural(toMark.length, 'selected file')}`
              : plan.changed.length === 0
                ? 'the spec file'
                : `all ${plural(plan.changed.length, 'changed file')}${
                    plan.changed.includes(spec.path) ? '' : ' and the spec file'
                  }`}
        </span>
      </div>
      {outcome && (
        <div
          className={outcome.kind === 'error' ? 'notice notice--error' : 'notice'}
          role={outcome.kind === 'error' ? 'alert' : 'status'}
        >
          <p>{outcome.text}</p>
          {outcome.rejected && outcome.rejected.length > 0 && (
            <ul>
              {outcome.rejected.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          )}
        </div>
      )}

      <SpecDecisions worktree={worktree} specPath={spec.path} base={base} live={live} />

      <p className="spec-detail__intent">{spec.intent}</p>
      <SpecRules spec={spec} />

      <div className="spec-detail__diff-header">
        <h4 className="spec-detail__subheading">Diff vs {base}</h4>
        {running && baseError === null && (
          <button
            type="button"
            className="button button--quiet button--small"
            aria-label="Refresh the diff"
            onClick={() => {
              setLoad({ state: 'loading' });
              setGeneration((n) => n + 1);
            }}
          >
            Refresh
          </button>
        )}
      </div>
      <DiffSection
        load={load}
        running={running}
        baseError={baseError}
        label={`Diff of ${spec.path}`}
        listed={changedPaths}
        base={base}
      />
      {load.state === 'ready' && notInBaseDiff.length > 0 && (
        <NotInBaseDiff
          files={notInBaseDiff}
          base={base}
          snapshotCommit={snapshotCommit}
          load={snapshotDiff}
        />
      )}
    </section>
  );
}

/** Paths whose changes a unified diff shows (its `diff --git a/X b/X` headers, both sides). */
function diffedPaths(diff: string): Set<string> {
  const paths = new Set<string>();
  for (const match of diff.matchAll(/^diff --git a\/(.*) b\/(.*)$/gm)) {
    paths.add(match[1]!);
    paths.add(match[2]!);
  }
  return paths;
}

/** The parts of a unified diff about `files`. */
function diffOf(diff: string, files: ReadonlySet<string>): string {
  return diff
    .split(/^(?=diff --git )/m)
    .filter((part) => {
      const header = /^diff --git a\/(.*) b\/(.*)$/m.exec(part);
      return header !== null && (files.has(header[1]!) || files.has(header[2]!));
    })
    .join('')
    .replace(/\n$/, '');
}

/** The listed files with no change vs the base: their change since the snapshot, or why none. */
function NotInBaseDiff({
  files,
  base,
  snapshotCommit,
  load,
}: {
  files: readonly string[];
  base: string;
  snapshotCommit: string | null;
  load: SnapshotDiffLoad;
}) {
  const shown = load.state === 'ready' ? diffedPaths(load.diff) : new Set<string>();
  const without = files.filter((file) => !shown.has(file));
  return (
    <section className="spec-detail__unbased" aria-label="Changes not in the diff vs the base">
      <h4 className="spec-detail__subheading">
        Same as {base}, changed since reconciled ({files.length})
      </h4>
      {snapshotCommit !== null && load.state === 'loading' && (
        <p className="empty-inline" role="status">
          <span className="spinner spinner--small" aria-hidden="true" /> Loading the changes since
          the snapshot…
        </p>
      )}
      {load.state === 'error' && (
        <p className="notice notice--error" role="alert">
          Could not get the changes since the snapshot: {load.message}
        </p>
      )}
      {load.state === 'ready' && load.diff !== '' && (
        <>
          <p className="muted">
            Their changes since the committed snapshot (commit {snapshotCommit?.slice(0, 10)}), what
            was reconciled:
          </p>
          <DiffView diff={load.diff} label="Changes since the committed snapshot" />
        </>
      )}
      {without.length > 0 && load.state !== 'loading' && (
        <p className="muted">
          {without.join(', ')}: no difference from {base}
          {snapshotCommit !== null ? ' nor from the snapshot’s commit' : ''}; the content they were
          reconciled at is not kept (only its hash), so there is nothing to compare with. Review the
          file as it is.
        </p>
      )}
    </section>
  );
}

function DiffSection({
  load,
  running,
  baseError,
  label,
  listed,
  base,
}: {
  load: DiffLoad;
  running: boolean;
  baseError: string | null;
  label: string;
  /** The files the "changed since reconciled" list shows. */
  listed: readonly string[];
  base: string;
}) {
  if (!running) {
    return (
      <p className="empty-inline" role="status">
        Start the server on the Server tab to see the diff.
      </p>
    );
  }
  if (baseError !== null) {
    return (
      <p className="empty-inline" role="status">
        No diff: the base cannot be used.
      </p>
    );
  }
  if (load.state === 'loading') {
    return (
      <p className="empty-inline" role="status">
        <span className="spinner spinner--small" aria-hidden="true" /> Loading the diff…
      </p>
    );
  }
  if (load.state === 'error') {
    return (
      <p className="notice notice--error" role="alert">
        Could not get the diff: {load.message}
      </p>
    );
  }
  const { diff } = load;
  return (
    <>
      {(diff.warnings ?? []).map((warning) => (
        <p key={warning} className="notice">
          {warning}
        </p>
      ))}
      {diff.spec_invalidated.length > 0 && (
        <p className="notice">
          The spec itself changed after these files were last reconciled; review them against it
          (marking the spec with them clears this): {diff.spec_invalidated.join(', ')}
        </p>
      )}
      {diff.binary_changes.length > 0 && (
        <p className="muted">Binary changes: {diff.binary_changes.join(', ')}</p>
      )}
      {diff.diff.trim() === '' ? (
        <p className="empty-inline">
          {listed.length === 0
            ? 'Nothing changed since it was last reconciled.'
            : `No file of the list differs from ${base}.`}
        </p>
      ) : (
        <DiffView diff={diff.diff} label={label} />
      )}
    </>
  );
}

/** The spec's behaviors, constraints and invariants: what the diff is judged against. */
function SpecRules({ spec }: { spec: SpecReconcileState }) {
  if (spec.behaviors.length + spec.constraints.length + spec.invariants.length === 0) return null;
  return (
    <div className="spec-rules">
      {spec.behaviors.length > 0 && (
        <section aria-label="Behaviors">
          <h4 className="spec-detail__subheading">Behaviors ({spec.behaviors.length})</h4>
          <ul className="spec-rules__list">
            {spec.behaviors.map((behavior) => (
              <li key={behavior.name}>
                <strong>{behavior.name}</strong>
                <span className="spec-rules__clause">
                  <em>Given</em> {behavior.given}
                </span>
                <span className="spec-rules__clause">
                  <em>Then</em> {behavior.then}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {(
        [
          ['Constraints', spec.constraints],
          ['Invariants', spec.invariants],
        ] as const
      ).map(
        ([label, items]) =>
          items.length > 0 && (
            <section key={label} aria-label={label}>
              <h4 className="spec-detail__subheading">
                {label} ({items.length})
              </h4>
              <ul className="spec-rules__list">
                {items.map((item) => (
                  <li key={item}>{item}</li>
                ))}
              </ul>
            </section>
          ),
      )}
    </div>
  );
}
