// A spec's drift score, read out: each term of NotarAI's formula (files changed, days since the
// last reconciliation, open decisions, orphaned globs, open questions, unspecced files) with its
// ratio, its weight from .notarai/scoring.yaml and what it adds, then what would lower the score —
// from get_drift_score (with the window's rule: the committed snapshot counts where the cache has
// no row), asked when its folded section is opened. A spec never reconciled says so first.
import { useEffect, useState } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import type { DriftReport, DriftTerms } from '../../../shared/notarai-check.ts';
import type { SpecReconcileState } from '../../../shared/reconcile.ts';
import { errorText } from '../common/error-text.ts';
import { useHostStore } from '../common/store-context.tsx';
import { getDriftScore } from './reconcile-calls.ts';

type TermName = keyof DriftTerms;

const TERMS: readonly { name: TermName; label: string; lower: string }[] = [
  {
    name: 'files_changed',
    label: 'Share of its files changed since reconciled',
    lower: 'review the changed files and mark them reconciled',
  },
  {
    name: 'days_since_reconciliation',
    label: 'Days since the last snapshot (÷ 90)',
    lower: 'write Snapshot state and commit it (the days count from its timestamp)',
  },
  {
    name: 'unresolved_decisions',
    label: 'Open decisions (÷ 5)',
    lower: 'accept or reject the proposed decisions in .notarai/decision-log.json',
  },
  {
    name: 'orphaned_globs',
    label: 'Share of artifact globs matching no file',
    lower: 'fix or remove the artifact globs that match nothing',
  },
  {
    name: 'open_questions',
    label: 'Open questions in the spec (÷ 5)',
    lower: 'answer the spec’s open_questions',
  },
  {
    name: 'unspecced_files',
    label: 'Unspecced files beside its files (share)',
    lower: 'govern or exclude the files no spec governs in its folders',
  },
];

export function DriftTermsView({
  report,
  specPath,
  neverReconciled,
}: {
  report: DriftReport;
  specPath: string;
  neverReconciled: boolean;
}) {
  const spec = report.specs.find((entry) => entry.spec_path === specPath);
  if (!spec) return <p className="muted">This spec is not scored (it could not be read).</p>;
  const weights = report.weights;
  const rows = TERMS.map((term) => {
    const ratio = spec.terms[term.name];
    const weight = weights?.[term.name] ?? null;
    return { ...term, ratio, weight, adds: weight === null ? null : ratio * weight };
  });
  const lowering = rows
    .filter((row) => row.adds !== null && row.adds > 0)
    .sort((a, b) => (b.adds ?? 0) - (a.adds ?? 0));
  return (
    <div className="drift-terms">
      {neverReconciled && (
        <p className="notice">
          Never reconciled: the spec itself was never marked, so every file it governs counts as
          changed until you review and mark them.
        </p>
      )}
      <table className="table drift-terms__table" aria-label="Drift score terms">
        <thead>
          <tr>
            <th scope="col">Term</th>
            <th scope="col" className="num">
              Value
            </th>
            <th scope="col" className="num">
              Weight
            </th>
            <th scope="col" className="num">
              Adds
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.name}>
              <th scope="row">
                {row.label}
                {row.name === 'days_since_reconciliation' && (
                  <span className="muted"> ({report.days_since_reconciliation} days)</span>
                )}
              </th>
              <td className="num">{row.ratio.toFixed(2)}</td>
              <td className="num">{row.weight === null ? '—' : row.weight.toFixed(2)}</td>
              <td className="num">{row.adds === null ? '—' : row.adds.toFixed(2)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Score (at most 1)</th>
            <td />
            <td />
            <td className="num">
              <strong>{spec.score.toFixed(2)}</strong> {spec.status}
            </td>
          </tr>
        </tfoot>
      </table>
      <p className="muted">
        Weights from .notarai/scoring.yaml (NotarAI&apos;s defaults where it sets none); healthy
        below 0.30, review below 0.60, else overdue.
      </p>
      {lowering.length > 0 && (
        <div>
          <p className="drift-terms__lower-title">What would lower it:</p>
          <ul className="drift-terms__lower">
            {lowering.map((row) => (
              <li key={row.name}>
                {row.lower} (−{(row.adds ?? 0).toFixed(2)})
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

type DriftLoad =
  | { state: 'idle' }
  | { state: 'loading' }
  | { state: 'ready'; report: DriftReport }
  | { state: 'error'; message: string };

/** The drift score, folded: its terms are asked (get_drift_score) when it is opened. */
export function DriftSection({
  worktree,
  spec,
  running,
  diffKey,
}: {
  worktree: WorktreeState;
  spec: SpecReconcileState;
  running: boolean;
  diffKey: string;
}) {
  const store = useHostStore();
  const [open, setOpen] = useState(false);
  const [load, setLoad] = useState<DriftLoad>({ state: 'idle' });
  useEffect(() => {
    if (!open || !running) return;
    let cancelled = false;
    getDriftScore(store.commands, worktree.id, spec.path).then(
      (report) => {
        if (!cancelled) setLoad({ state: 'ready', report });
      },
      (error: unknown) => {
        if (!cancelled) setLoad({ state: 'error', message: errorText(error) });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [open, running, store, worktree.id, spec.path, diffKey]);
  return (
    <details className="spec-text" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary className="spec-text__summary">
        Drift score{' '}
        {spec.drift ? `${spec.drift.score.toFixed(2)} ${spec.drift.status}` : '(not scored yet)'}:
        its terms and what would lower it
      </summary>
      {!running ? (
        <p className="empty-inline">Start the server to see the terms.</p>
      ) : load.state === 'loading' || load.state === 'idle' ? (
        <p className="empty-inline" role="status">
          <span className="spinner spinner--small" aria-hidden="true" /> Scoring…
        </p>
      ) : load.state === 'error' ? (
        <p className="notice notice--error" role="alert">
          Could not get the score: {load.message}
        </p>
      ) : (
        <DriftTermsView
          report={load.report}
          specPath={spec.path}
          neverReconciled={spec.lastReconciledAt === null}
        />
      )}
    </details>
  );
}
