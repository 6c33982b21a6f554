// The Reconciliation tab's cache actions: Clear cache (asked first) and Snapshot state, which
// asks both dry runs first and shows what the write would change in the committed JSON file —
// the fields that change (cli_version is never lowered), the fingerprints added, changed and
// removed — with counts that add up (this machine's rows + the committed ones kept = files +
// specs), then writes the chosen one.
import { useId, useRef, useState } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import type { SnapshotStateResult } from '../../../shared/reconcile-results.ts';
import { plural } from '../common/format.ts';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { ConfirmDialog } from '../common/confirm-dialog.tsx';
import { clearCache, snapshotState } from './reconcile-calls.ts';

type ActionOutcome = { kind: 'ok' | 'error'; text: string };

/** The two snapshots a user can write, as dry runs said (nothing written yet). */
interface SnapshotPlan {
  keep: SnapshotStateResult;
  cacheOnly: SnapshotStateResult;
}

export function CacheActions({ worktree, live }: { worktree: WorktreeState; live: boolean }) {
  const store = useHostStore();
  const running = worktree.status.state === 'running';
  const [busy, setBusy] = useState<'clear' | 'snapshot' | 'planning' | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [plan, setPlan] = useState<SnapshotPlan | null>(null);
  const [keepCommitted, setKeepCommitted] = useState(true);
  const [outcome, setOutcome] = useState<ActionOutcome | null>(null);
  const choiceName = useId();
  const snapshotButton = useRef<HTMLButtonElement>(null);

  const clear = async (): Promise<void> => {
    setBusy('clear');
    setOutcome(null);
    setConfirming(false);
    try {
      const cleared = await clearCache(store.commands, worktree.id);
      setOutcome({
        kind: 'ok',
        text: cleared
          ? 'Cache cleared: every governed file counts as changed again.'
          : 'There was no cache to clear.',
      });
    } catch (error) {
      setOutcome({ kind: 'error', text: errorText(error) });
    } finally {
      setBusy(null);
    }
  };

  /** Asks both dry runs, then shows what each would write: nothing is written yet. */
  const planSnapshot = async (): Promise<void> => {
    setBusy('planning');
    setOutcome(null);
    try {
      const [keep, cacheOnly] = await Promise.all([
        snapshotState(store.commands, worktree.id, { keepCommitted: true, dryRun: true }),
        snapshotState(store.commands, worktree.id, { keepCommitted: false, dryRun: true }),
      ]);
      setKeepCommitted(true);
      setPlan({ keep, cacheOnly });
    } catch (error) {
      setOutcome({ kind: 'error', text: errorText(error) });
    } finally {
      setBusy(null);
    }
  };

  const writeSnapshot = async (): Promise<void> => {
    setBusy('snapshot');
    setOutcome(null);
    try {
      const result = await snapshotState(store.commands, worktree.id, {
        keepCommitted,
        dryRun: false,
      });
      setPlan(null);
      setOutcome({
        kind: 'ok',
        text:
          `Snapshot written to ${result.state_path} ` +
          `(${plural(result.files, 'file')}, ${plural(result.specs, 'spec')}` +
          (result.git_hash ? `, commit ${result.git_hash.slice(0, 10)}` : '') +
          (result.kept_committed
            ? `; ${plural(result.kept_committed, 'committed fingerprint')} kept`
            : '') +
          '). Commit it to share it.',
      });
    } catch (error) {
      setPlan(null);
      setOutcome({ kind: 'error', text: errorText(error) });
    } finally {
      setBusy(null);
    }
  };

  const disabled = busy !== null || !live || !running;
  return (
    <section className="card reconcile-actions" aria-label="Cache">
      <div className="button-row">
        <button
          type="button"
          className="button"
          disabled={disabled}
          onClick={() => setConfirming(true)}
        >
          {busy === 'clear' ? 'Clearing…' : 'Clear cache'}
        </button>
        {confirming && (
          <ConfirmDialog
            title="Clear the hash cache?"
            confirmLabel="Clear now"
            confirmDisabled={disabled}
            onConfirm={() => void clear()}
            onCancel={() => setConfirming(false)}
          >
            <p>Every governed file will count as changed until it is reconciled again.</p>
          </ConfirmDialog>
        )}
        <button
          type="button"
          className="button"
          ref={snapshotButton}
          disabled={disabled}
          onClick={() => void planSnapshot()}
        >
          {busy === 'planning' ? 'Reading…' : 'Snapshot state…'}
        </button>
        {!running && <span className="muted">Start the server to use these.</span>}
      </div>
      {plan && (
        <ConfirmDialog
          title={`Write ${STATE_FILE_NAME}?`}
          confirmLabel="Write snapshot"
          busyLabel="Writing…"
          tone={keepCommitted ? 'primary' : 'danger'}
          busy={busy === 'snapshot'}
          confirmDisabled={disabled}
          returnFocusTo={snapshotButton}
          onConfirm={() => void writeSnapshot()}
          onCancel={() => setPlan(null)}
        >
          <p>
            It is usually committed: writing changes it for everyone who pulls your commit.{' '}
            {plan.keep.committed_fingerprints === null ||
            plan.keep.committed_fingerprints === undefined
              ? 'There is no snapshot yet.'
              : `The snapshot there now holds ${plural(plan.keep.committed_fingerprints, 'fingerprint')};`}{' '}
            this machine's cache holds {plural(plan.keep.cache_fingerprints ?? 0, 'fingerprint')}.
          </p>
          <fieldset className="snapshot-confirm__choices">
            <legend className="visually-hidden">What the snapshot holds</legend>
            <label>
              <input
                type="radio"
                name={choiceName}
                checked={keepCommitted}
                onChange={() => setKeepCommitted(true)}
              />{' '}
              Keep the committed fingerprints of files this machine has not reconciled
              (recommended): {sum(plan.keep)}.
            </label>
            <label>
              <input
                type="radio"
                name={choiceName}
                checked={!keepCommitted}
                onChange={() => setKeepCommitted(false)}
              />{' '}
              Only this machine's cache (NotarAI's snapshot): {sum(plan.cacheOnly)}
              {(plan.keep.kept_committed ?? 0) > 0 &&
                ` — drops ${plural(plan.keep.kept_committed ?? 0, 'committed fingerprint')} this machine never reconciled`}
              .
            </label>
          </fieldset>
          <SnapshotChangeView result={keepCommitted ? plan.keep : plan.cacheOnly} />
        </ConfirmDialog>
      )}
      {outcome && (
        <p
          className={outcome.kind === 'error' ? 'notice notice--error' : 'notice'}
          role={outcome.kind === 'error' ? 'alert' : 'status'}
        >
          {outcome.text}
        </p>
      )}
    </section>
  );
}

const STATE_FILE_NAME = '.notarai/reconciliation_state.json';

/** "2 from this machine's cache + 1 committed kept = 3 files + 0 specs": the counts, added up. */
function sum(result: SnapshotStateResult): string {
  const cache = result.cache_fingerprints ?? 0;
  const kept = result.kept_committed ?? 0;
  return (
    `${cache} from this machine's cache` +
    (kept > 0 ? ` + ${kept} committed kept` : '') +
    ` = ${plural(result.files, 'file')} + ${plural(result.specs, 'spec')}`
  );
}

/** What the write changes in the JSON file, as +/- lines (nothing is written yet). */
function SnapshotChangeView({ result }: { result: SnapshotStateResult }) {
  const change = result.change;
  if (!change) return null;
  const lines: string[] = [];
  const quoted = (value: string | null): string => (value === null ? 'null' : `"${value}"`);
  if (!change.fields.some((field) => field.field === 'cli_version') && result.cli_version) {
    lines.push(`  "cli_version": "${result.cli_version}" (kept: a snapshot never lowers it)`);
  }
  for (const field of change.fields) {
    if (field.before !== null) lines.push(`- "${field.field}": ${quoted(field.before)}`);
    lines.push(`+ "${field.field}": ${quoted(field.after)}`);
  }
  const sign = { added: '+', changed: '~', removed: '-' } as const;
  for (const entry of change.sample)
    lines.push(`${sign[entry.change]} ${entry.path} (${entry.change})`);
  const listed = change.sample.length;
  const total = change.added + change.changed + change.removed;
  return (
    <div className="snapshot-change">
      <p className="muted">
        What the write changes: {change.added} fingerprints added, {change.changed} changed,{' '}
        {change.removed} removed{total > listed ? ` (the first ${listed} listed)` : ''}.
      </p>
      <pre className="code-block diff" aria-label={`Change to ${STATE_FILE_NAME}`} tabIndex={0}>
        {lines.map((line, index) => (
          <span
            key={index}
            className={`diff__line diff__line--${
              line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'context'
            }`}
          >
            {line}
            {'\n'}
          </span>
        ))}
      </pre>
    </div>
  );
}
