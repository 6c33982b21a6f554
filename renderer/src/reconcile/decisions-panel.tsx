// Decision proposals in the Reconciliation tab (NotarAI 0.7's `.notarai/decision-log.json`):
// SpecDecisions in a spec's detail (that spec's proposals) and WorktreeDecisions under the table
// (every proposal of the worktree, by spec — those of a spec that does not load included). Each
// proposal shows its choice, rationale, date, origin and related files, each of which opens its
// diff vs the base (in the spec's review when it lists the file, else under the proposal). Accept… shows the exact change to the spec file (asked from the worktree's
// process, nothing written) and writes only on confirm, refused if the proposal or the spec changed
// since it was shown; Reject… asks for a reason (optional, as in NotarAI). Both write what
// `grove decisions accept|reject` writes. The lists follow the log live (decisions-calls.ts).
import { useId, useRef, useState, type RefObject } from 'react';
import type { AcceptPreview, Decision } from '../../../shared/decisions.ts';
import { MAX_REJECT_REASON_CHARS } from '../../../shared/decisions.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import { ConfirmDialog } from '../common/confirm-dialog.tsx';
import { errorText } from '../common/error-text.ts';
import { plural } from '../common/format.ts';
import { useHostState, useHostStore } from '../common/store-context.tsx';
import { diffOfFile, useDecisionList, type DecisionList } from './decisions-calls.ts';
import { DiffView } from './diff-view.tsx';
import { getSpecDiff } from './reconcile-calls.ts';

interface PanelProps {
  worktree: WorktreeState;
  /** The base the related files' diffs compare against (the state's). */
  base: string;
  live: boolean;
  /**
   * Shows a related file in the spec's review (selected, its diff beside the list); false when the
   * review does not list it (its diff then opens under the proposal).
   */
  showInReview?: (file: string) => boolean;
}

type Outcome = { kind: 'ok' | 'error'; text: string };

/** One spec's proposals, in its detail. */
export function SpecDecisions({
  worktree,
  specPath,
  base,
  live,
  showInReview,
}: PanelProps & { specPath: string }) {
  const { load, reload } = useDecisionList(worktree);
  const headingId = useId();
  const sectionRef = useRef<HTMLElement>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const mine =
    load.state === 'ready' ? load.list.decisions.filter((d) => d.spec_path === specPath) : [];
  const proposed = mine.filter((d) => d.status === 'proposed');
  const { snapshot } = useHostState();
  const counted = snapshot?.reconcile[worktree.id]?.decisions?.bySpec.some(
    (entry) => entry.specPath === specPath,
  );
  // A spec nobody proposed anything for shows no section (most specs, most of the time).
  if (mine.length === 0 && !counted && outcome === null && load.state !== 'error') return null;
  return (
    <section ref={sectionRef} className="decisions" aria-labelledby={headingId} tabIndex={-1}>
      <h4 id={headingId} className="spec-detail__subheading">
        Decisions ({proposed.length} proposed)
      </h4>
      <ListState load={load} />
      {load.state === 'ready' && proposed.length === 0 && (
        <p className="empty-inline">No proposal awaits a decision for this spec.</p>
      )}
      <Proposals
        decisions={proposed}
        worktree={worktree}
        base={base}
        live={live}
        showInReview={showInReview}
        fallbackFocus={sectionRef}
        onOutcome={(next) => {
          setOutcome(next);
          reload();
        }}
      />
      <OutcomeNotice outcome={outcome} />
      <Settled decisions={mine.filter((d) => d.status !== 'proposed')} />
    </section>
  );
}

/** Every proposal of the worktree, by spec (a heading counts those awaiting a person). */
export function WorktreeDecisions({ worktree, base, live }: PanelProps) {
  const { snapshot } = useHostState();
  const summary = snapshot?.reconcile[worktree.id]?.decisions;
  const { load, reload } = useDecisionList(worktree);
  const headingId = useId();
  const sectionRef = useRef<HTMLElement>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const all = load.state === 'ready' ? load.list.decisions : [];
  const proposed = all.filter((d) => d.status === 'proposed');
  const specs = [...new Set(proposed.map((d) => d.spec_path))];
  const count = load.state === 'ready' ? proposed.length : (summary?.proposed ?? 0);
  // Shown once there is something to say: entries in the log, a problem, an outcome.
  const something = outcome !== null || Boolean(summary?.problem) || load.state === 'error';
  if (!something && (load.state === 'ready' ? all.length === 0 : !summary?.total)) return null;
  return (
    <section
      ref={sectionRef}
      className="card decisions decisions--worktree"
      aria-labelledby={headingId}
      tabIndex={-1}
    >
      <h3 id={headingId} className="card__title">
        Decisions: {count === 0 ? 'none' : plural(count, 'proposal')} awaiting a person
      </h3>
      <p className="muted">
        Proposals in <code>.notarai/decision-log.json</code>, made by a reconciliation or an agent
        (propose_decision). Accepting adds one to its spec&apos;s <code>decisions:</code>; only a
        person can, here or with <code>grove decisions</code>.
      </p>
      {summary?.problem && (
        <p className="notice notice--error" role="alert">
          {summary.problem}
        </p>
      )}
      <ListState load={load} />
      {specs.map((spec) => (
        <section key={spec} className="decisions__spec" aria-label={`Proposals for ${spec}`}>
          <h4 className="spec-detail__subheading">
            <code>{spec}</code> ({proposed.filter((d) => d.spec_path === spec).length})
          </h4>
          <Proposals
            decisions={proposed.filter((d) => d.spec_path === spec)}
            worktree={worktree}
            base={base}
            live={live}
            fallbackFocus={sectionRef}
            onOutcome={(next) => {
              setOutcome(next);
              reload();
            }}
          />
        </section>
      ))}
      <OutcomeNotice outcome={outcome} />
      <Settled decisions={all.filter((d) => d.status !== 'proposed')} />
    </section>
  );
}

function ListState({ load }: { load: DecisionList }) {
  if (load.state === 'stopped') {
    return (
      <p className="empty-inline" role="status">
        Start the server on the Server tab to see the proposals.
      </p>
    );
  }
  if (load.state === 'loading') {
    return (
      <p className="empty-inline" role="status">
        <span className="spinner spinner--small" aria-hidden="true" /> Reading the decision log…
      </p>
    );
  }
  if (load.state === 'error') {
    return (
      <p className="notice notice--error" role="alert">
        Could not read the proposals: {load.message}
      </p>
    );
  }
  return null;
}

function OutcomeNotice({ outcome }: { outcome: Outcome | null }) {
  if (!outcome) return null;
  return (
    <p
      className={outcome.kind === 'error' ? 'notice notice--error' : 'notice'}
      role={outcome.kind === 'error' ? 'alert' : 'status'}
    >
      {outcome.text}
    </p>
  );
}

/** Settled entries listed at most (the rest are counted; the CLI lists them all). */
const SETTLED_SHOWN = 100;

/** Accepted or rejected entries still in the log (NotarAI keeps rejected ones), folded. */
function Settled({ decisions }: { decisions: Decision[] }) {
  if (decisions.length === 0) return null;
  return (
    <details className="decisions__settled">
      <summary>{plural(decisions.length, 'settled proposal')} kept in the log</summary>
      <ul className="decisions__settled-list">
        {decisions.slice(0, SETTLED_SHOWN).map((d) => (
          <li key={d.index}>
            <span className="tag tag--quiet">{d.status}</span> {d.choice}{' '}
            <span className="muted">
              ({d.date}, <code>{d.spec_path}</code>)
              {d.reject_reason !== null && ` — reason: ${d.reject_reason}`}
            </span>
          </li>
        ))}
        {decisions.length > SETTLED_SHOWN && (
          <li className="muted">
            and {decisions.length - SETTLED_SHOWN} more (<code>grove decisions list</code> shows
            them all)
          </li>
        )}
      </ul>
    </details>
  );
}

interface ProposalsProps {
  showInReview?: ((file: string) => boolean) | undefined;
  decisions: Decision[];
  worktree: WorktreeState;
  base: string;
  live: boolean;
  fallbackFocus: RefObject<HTMLElement | null>;
  onOutcome(outcome: Outcome): void;
}

/** Proposals shown at first in one list (a log of a MiB holds thousands); "Show more" adds as many. */
const PROPOSALS_SHOWN = 50;

function Proposals({ decisions, ...props }: ProposalsProps) {
  const [shown, setShown] = useState(PROPOSALS_SHOWN);
  if (decisions.length === 0) return null;
  const more = decisions.length - shown;
  return (
    <>
      <ol className="decisions__list">
        {decisions.slice(0, shown).map((decision) => (
          <li key={`${decision.index}:${decision.choice}`}>
            <Proposal decision={decision} {...props} />
          </li>
        ))}
      </ol>
      {more > 0 && (
        <button
          type="button"
          className="button button--small"
          onClick={() => setShown((n) => n + PROPOSALS_SHOWN)}
        >
          Show {Math.min(more, PROPOSALS_SHOWN)} more (of {decisions.length})
        </button>
      )}
    </>
  );
}

type Dialog =
  | { kind: 'accept'; preview: AcceptPreview | null; error: string | null; busy: boolean }
  | { kind: 'reject'; reason: string; error: string | null; busy: boolean };

function Proposal({
  decision,
  worktree,
  base,
  live,
  fallbackFocus,
  onOutcome,
  showInReview,
}: Omit<ProposalsProps, 'decisions'> & { decision: Decision }) {
  const store = useHostStore();
  const headingId = useId();
  const reasonId = useId();
  const [dialog, setDialog] = useState<Dialog | null>(null);
  // Set when the proposal was decided: it leaves the list, so focus goes to the section.
  const focusAfterClose = useRef<HTMLElement | null>(null);
  const running = worktree.status.state === 'running';
  const ref = { worktreeId: worktree.id, specPath: decision.spec_path, index: decision.index };

  const openAccept = async (): Promise<void> => {
    focusAfterClose.current = null;
    setDialog({ kind: 'accept', preview: null, error: null, busy: false });
    try {
      const preview = await store.commands.previewAcceptDecision(ref);
      setDialog((d) => (d?.kind === 'accept' ? { ...d, preview } : d));
    } catch (error) {
      setDialog((d) => (d?.kind === 'accept' ? { ...d, error: errorText(error) } : d));
    }
  };

  const accept = async (preview: AcceptPreview): Promise<void> => {
    setDialog((d) => (d ? { ...d, busy: true, error: null } : d));
    try {
      const result = await store.commands.acceptDecision({
        ...ref,
        expected: { decision: preview.decision, specSha256: preview.specSha256 },
      });
      focusAfterClose.current = fallbackFocus.current;
      setDialog(null);
      onOutcome({
        kind: 'ok',
        text: `Accepted “${decision.choice}”: added to ${decision.spec_path}'s decisions and removed from the log (${result.written.join(', ')} written).`,
      });
    } catch (error) {
      setDialog((d) => (d ? { ...d, busy: false, error: errorText(error) } : d));
    }
  };

  const reject = async (reason: string): Promise<void> => {
    setDialog((d) => (d ? { ...d, busy: true, error: null } : d));
    try {
      const trimmed = reason.trim();
      await store.commands.rejectDecision({
        ...ref,
        ...(trimmed === '' ? {} : { reason: trimmed }),
        expected: { decision },
      });
      focusAfterClose.current = fallbackFocus.current;
      setDialog(null);
      onOutcome({
        kind: 'ok',
        text: `Rejected “${decision.choice}”${trimmed === '' ? '' : ` (reason: ${trimmed})`}: marked rejected in the log.`,
      });
    } catch (error) {
      setDialog((d) => (d ? { ...d, busy: false, error: errorText(error) } : d));
    }
  };

  const disabled = !live || !running || dialog !== null;
  return (
    <article className="decision" aria-labelledby={headingId}>
      <h5 id={headingId} className="decision__choice">
        {decision.choice}
      </h5>
      <p className="decision__meta muted">
        #{decision.index} · {decision.date} · proposed by {decision.origin}
      </p>
      <p className="decision__rationale">{decision.rationale}</p>
      {decision.related_files.length > 0 && (
        <RelatedFiles
          decision={decision}
          worktree={worktree}
          base={base}
          showInReview={showInReview}
        />
      )}
      <div className="button-row">
        <button
          type="button"
          className="button button--small"
          disabled={disabled}
          onClick={() => void openAccept()}
        >
          Accept…
        </button>
        <button
          type="button"
          className="button button--small"
          disabled={disabled}
          onClick={() => {
            focusAfterClose.current = null;
            setDialog({ kind: 'reject', reason: '', error: null, busy: false });
          }}
        >
          Reject…
        </button>
      </div>
      {dialog?.kind === 'accept' && (
        <ConfirmDialog
          title={`Accept into ${decision.spec_path}?`}
          confirmLabel="Accept and write the spec"
          busyLabel="Writing…"
          tone="primary"
          wide
          busy={dialog.busy}
          confirmDisabled={dialog.preview === null}
          returnFocusTo={focusAfterClose}
          onCancel={() => setDialog(null)}
          onConfirm={() => dialog.preview && void accept(dialog.preview)}
        >
          <p>
            “{decision.choice}” goes into the spec&apos;s <code>decisions:</code> and leaves{' '}
            <code>.notarai/decision-log.json</code>
            {dialog.preview
              ? ` (${plural(dialog.preview.remaining, 'entry', 'entries')} stay)`
              : ''}
            . Nothing is written until you accept; the spec is written only if it still is the text
            shown.
          </p>
          {dialog.preview === null && dialog.error === null && (
            <p className="empty-inline" role="status">
              <span className="spinner spinner--small" aria-hidden="true" /> Working out the change…
            </p>
          )}
          {dialog.preview && (
            <DiffView
              diff={dialog.preview.specDiff}
              label={`What changes in ${decision.spec_path}`}
            />
          )}
          {dialog.error && (
            <p className="notice notice--error" role="alert">
              {dialog.error}
            </p>
          )}
        </ConfirmDialog>
      )}
      {dialog?.kind === 'reject' && (
        <ConfirmDialog
          title={`Reject “${decision.choice}”?`}
          confirmLabel="Reject"
          busyLabel="Rejecting…"
          tone="danger"
          busy={dialog.busy}
          returnFocusTo={focusAfterClose}
          onCancel={() => setDialog(null)}
          onConfirm={() => void reject(dialog.reason)}
        >
          <p>
            The proposal stays in <code>.notarai/decision-log.json</code>, marked rejected; the spec
            is not changed.
          </p>
          <label htmlFor={reasonId} className="decision__reason-label">
            Reason (optional)
          </label>
          <textarea
            id={reasonId}
            className="textarea"
            rows={3}
            maxLength={MAX_REJECT_REASON_CHARS}
            value={dialog.reason}
            disabled={dialog.busy}
            onChange={(event) => {
              const reason = event.target.value;
              setDialog((d) => (d?.kind === 'reject' ? { ...d, reason } : d));
            }}
          />
          {dialog.error && (
            <p className="notice notice--error" role="alert">
              {dialog.error}
            </p>
          )}
        </ConfirmDialog>
      )}
    </article>
  );
}

type FileDiff =
  | { state: 'review' }
  | { state: 'loading' }
  | { state: 'ready'; diff: string }
  | { state: 'error'; message: string };

/**
 * The proposal's related files; each opens its diff vs the base: in the spec's review when it lists
 * the file, else under the proposal (from the spec's diff).
 */
function RelatedFiles({
  decision,
  worktree,
  base,
  showInReview,
}: {
  decision: Decision;
  worktree: WorktreeState;
  base: string;
  showInReview?: ((file: string) => boolean) | undefined;
}) {
  const store = useHostStore();
  const [open, setOpen] = useState<{ file: string; load: FileDiff } | null>(null);
  const show = async (file: string): Promise<void> => {
    if (open?.file === file) return setOpen(null);
    if (showInReview?.(file)) return setOpen({ file, load: { state: 'review' } });
    setOpen({ file, load: { state: 'loading' } });
    try {
      const result = await getSpecDiff(store.commands, worktree.id, decision.spec_path, base);
      const diff = diffOfFile(result.diff, file);
      setOpen((o) => (o?.file === file ? { file, load: { state: 'ready', diff } } : o));
    } catch (error) {
      const message = errorText(error);
      setOpen((o) => (o?.file === file ? { file, load: { state: 'error', message } } : o));
    }
  };
  const running = worktree.status.state === 'running';
  return (
    <div className="decision__files">
      <span className="muted">Related files:</span>
      <ul className="decision__file-list">
        {decision.related_files.map((file) => (
          <li key={file}>
            <button
              type="button"
              className="link-button"
              aria-expanded={open?.file === file}
              disabled={!running}
              onClick={() => void show(file)}
            >
              <code>{file}</code>
            </button>
          </li>
        ))}
      </ul>
      {open && open.load.state === 'review' && (
        <p className="muted" role="status">
          <code>{open.file}</code>: its diff is shown in the review above.
        </p>
      )}
      {open && open.load.state === 'loading' && (
        <p className="empty-inline" role="status">
          <span className="spinner spinner--small" aria-hidden="true" /> Loading the diff of{' '}
          {open.file}…
        </p>
      )}
      {open && open.load.state === 'error' && (
        <p className="notice notice--error" role="alert">
          Could not get the diff: {open.load.message}
        </p>
      )}
      {open &&
        open.load.state === 'ready' &&
        (open.load.diff === '' ? (
          <p className="empty-inline">
            <code>{open.file}</code> is not in the diff of {decision.spec_path} vs {base}: it does
            not differ from {base}, the spec does not govern it, or it was reconciled since.
          </p>
        ) : (
          <DiffView diff={open.load.diff} label={`Diff of ${open.file} vs ${base}`} />
        ))}
    </div>
  );
}
