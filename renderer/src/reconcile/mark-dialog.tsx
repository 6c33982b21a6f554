// The question "Mark reconciled" asks before a mark that covers files nobody viewed or more than a
// handful: how many files, how many were never shown, the other specs that govern them (the mark
// reconciles the files for those too) and where the mark is kept. A modal <dialog>: focus starts
// on Cancel (the safe answer), Escape cancels, and focus goes back to the button that opened it.
import { useEffect, useId, useRef } from 'react';
import { counted, type MarkPlan } from './review-files.ts';

/** Other specs named in full; the rest are counted. */
const SPECS_SHOWN = 5;
/** Files named per other spec. */
const FILES_SHOWN = 3;

export function MarkDialog({
  plan,
  onConfirm,
  onCancel,
}: {
  plan: MarkPlan;
  onConfirm(): void;
  onCancel(): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    const element = dialog.current;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (element && !element.open) element.showModal();
    cancel.current?.focus();
    return () => {
      if (element?.open) element.close();
      opener?.focus();
    };
  }, []);

  const count = plan.files.length;
  const others = [...plan.otherSpecs];
  return (
    <dialog
      ref={dialog}
      className="mark-dialog"
      aria-labelledby={titleId}
      aria-describedby={bodyId}
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
    >
      <h2 id={titleId} className="mark-dialog__title">
        Mark {counted(count, 'file')} reconciled?
      </h2>
      <div id={bodyId} className="mark-dialog__body">
        <p>
          {plan.neverShown === 0
            ? 'You were shown every one of them in this review.'
            : `${plan.neverShown.toLocaleString('en-US')} of them ${
                plan.neverShown === 1 ? 'was' : 'were'
              } never shown in this review`}
          {plan.neverShown > 0 &&
            (plan.notViewed > 0
              ? `, and ${plan.notViewed.toLocaleString('en-US')} ${
                  plan.notViewed === 1 ? 'is' : 'are'
                } not ticked Viewed.`
              : '.')}
          {plan.withSpec && ' The spec file is marked with them.'}
        </p>
        {others.length > 0 && (
          <div>
            <p>Other specs govern some of these files and will count them as reconciled too:</p>
            <ul className="mark-dialog__specs">
              {others.slice(0, SPECS_SHOWN).map(([spec, files]) => (
                <li key={spec}>
                  <code>{spec}</code>: {files.slice(0, FILES_SHOWN).join(', ')}
                  {files.length > FILES_SHOWN && ` and ${files.length - FILES_SHOWN} more`}
                </li>
              ))}
              {others.length > SPECS_SHOWN && (
                <li>and {counted(others.length - SPECS_SHOWN, 'other spec')}</li>
              )}
            </ul>
          </div>
        )}
        <p className="muted">
          The marks are kept in this machine&apos;s hash cache (.notarai/.cache/notarai.db), not in
          the repository: others see them only once you write Snapshot state and commit it. Undo
          restores the cache as it was before this mark.
        </p>
      </div>
      <div className="button-row mark-dialog__buttons">
        <button ref={cancel} type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="button button--primary" onClick={onConfirm}>
          Mark {counted(count, 'file')}
        </button>
      </div>
    </dialog>
  );
}
