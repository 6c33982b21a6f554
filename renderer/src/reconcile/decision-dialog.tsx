// The confirmation a decision's accept or reject opens: a modal <dialog> (the browser keeps focus
// inside it and the page behind inert), titled by its heading, that opens with focus on the safe
// button (Cancel), cancels on Escape (unless the action is running), and gives focus back to the
// button that opened it — or, when that button is gone or going (the proposal was accepted), to
// `focusAfterClose` or `fallbackFocus`. Nothing is written until the confirm button is pressed.
import { useEffect, useId, useRef, type ReactNode, type RefObject } from 'react';

export interface DecisionDialogProps {
  title: ReactNode;
  children: ReactNode;
  confirmLabel: string;
  /** The confirm button's look: primary for an accept, danger for a reject. */
  tone: 'primary' | 'danger';
  busy: boolean;
  /** The confirm button is disabled (the preview failed): Cancel still works. */
  confirmDisabled?: boolean;
  onConfirm(): void;
  onCancel(): void;
  /** Where focus goes on close when the opener is no longer in the page. */
  fallbackFocus?: RefObject<HTMLElement | null>;
  /**
   * Set before closing when the opener is about to go (the proposal was accepted or rejected and
   * leaves the list): focus goes there instead of the opener.
   */
  focusAfterClose?: RefObject<HTMLElement | null>;
}

export function DecisionDialog({
  title,
  children,
  confirmLabel,
  tone,
  busy,
  confirmDisabled = false,
  onConfirm,
  onCancel,
  fallbackFocus,
  focusAfterClose,
}: DecisionDialogProps) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  // Latest values for the listeners registered once.
  const latest = useRef({ busy, onCancel, fallbackFocus, focusAfterClose });
  useEffect(() => {
    latest.current = { busy, onCancel, fallbackFocus, focusAfterClose };
  });

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (!dialog.open) dialog.showModal();
    cancelRef.current?.focus();
    const onCancelEvent = (event: Event): void => {
      // Escape: the dialog is closed by React (unmounted), never by the browser behind its back.
      event.preventDefault();
      if (!latest.current.busy) latest.current.onCancel();
    };
    dialog.addEventListener('cancel', onCancelEvent);
    return () => {
      dialog.removeEventListener('cancel', onCancelEvent);
      if (dialog.open) dialog.close();
      const { fallbackFocus: fallback, focusAfterClose: after } = latest.current;
      const back = after?.current ?? (opener?.isConnected ? opener : fallback?.current);
      back?.focus();
    };
  }, []);

  return (
    <dialog ref={dialogRef} className="decision-dialog" aria-labelledby={titleId}>
      <h3 id={titleId} className="decision-dialog__title">
        {title}
      </h3>
      <div className="decision-dialog__body">{children}</div>
      <div className="button-row decision-dialog__buttons">
        <button
          type="button"
          className={`button button--${tone}`}
          disabled={busy || confirmDisabled}
          onClick={onConfirm}
        >
          {busy ? 'Writing…' : confirmLabel}
        </button>
        <button ref={cancelRef} type="button" className="button" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
