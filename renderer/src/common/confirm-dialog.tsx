// The one confirmation of the window (Remove repository, Clear cache, Snapshot state, Rotate token,
// Stop with clients connected, Delete conversation, Accept or Reject a decision): a native modal
// <dialog> (showModal), so the rest of the window is inert while it asks. It opens with focus on Cancel — the safe choice, so
// Enter right after opening never destroys anything — Escape cancels, and focus goes back to the
// control that opened it. Mount it to ask, unmount it (onCancel / after onConfirm) to close.
import { useEffect, useId, useRef, type ReactNode, type RefObject } from 'react';

export interface ConfirmDialogProps {
  /** The question, e.g. "Remove repository grove?" (the dialog's name). */
  title: string;
  /** What happens, in a sentence or two (and any choices, such as radio buttons). */
  children?: ReactNode;
  /** The confirm button, e.g. "Remove". */
  confirmLabel: string;
  /** The confirm button while the action runs, e.g. "Removing…". */
  busyLabel?: string;
  /** danger (red, the default): cannot be undone; primary: a change the user can take back. */
  tone?: 'danger' | 'primary';
  /** The action runs: both buttons are disabled and Escape does nothing. */
  busy?: boolean;
  /** The action is not possible now (Cancel still works). */
  confirmDisabled?: boolean;
  /** Where focus goes back to, when not the element focused at opening (an opener disabled while
   * it prepared the question). */
  returnFocusTo?: RefObject<HTMLElement | null>;
  /** Wide enough for a diff (an accepted decision's change to its spec). */
  wide?: boolean;
  onConfirm(): void;
  onCancel(): void;
}

export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  busyLabel,
  tone = 'danger',
  busy = false,
  confirmDisabled = false,
  returnFocusTo,
  wide = false,
  onConfirm,
  onCancel,
}: ConfirmDialogProps) {
  const titleId = useId();
  const bodyId = useId();
  const dialogRef = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  // The latest props for the native listeners, which are attached once.
  const latest = useRef({ busy, onCancel, returnFocusTo });
  useEffect(() => {
    latest.current = { busy, onCancel, returnFocusTo };
  });

  useEffect(() => {
    const dialog = dialogRef.current;
    if (!dialog) return;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    // Escape asks to cancel: the parent decides (it unmounts the dialog), never while busy.
    const onCancelEvent = (event: Event): void => {
      event.preventDefault();
      if (!latest.current.busy) latest.current.onCancel();
    };
    // Chromium may close a dialog without a cancellable event (a second Escape with no user
    // activation in between): closed is cancelled.
    const onClose = (): void => latest.current.onCancel();
    dialog.addEventListener('cancel', onCancelEvent);
    dialog.addEventListener('close', onClose);
    if (!dialog.open) dialog.showModal();
    cancelRef.current?.focus();
    return () => {
      dialog.removeEventListener('cancel', onCancelEvent);
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      // Back where the user was; an opener that went away (a removed repository) cannot take it.
      const back = latest.current.returnFocusTo?.current ?? opener;
      if (back?.isConnected) back.focus();
    };
  }, []);

  return (
    <dialog
      ref={dialogRef}
      className={wide ? 'confirm-dialog confirm-dialog--wide' : 'confirm-dialog'}
      role="alertdialog"
      aria-labelledby={titleId}
      aria-describedby={children ? bodyId : undefined}
    >
      <h2 id={titleId} className="confirm-dialog__title">
        {title}
      </h2>
      {children && (
        <div id={bodyId} className="confirm-dialog__body">
          {children}
        </div>
      )}
      <div className="confirm-dialog__actions">
        <button ref={cancelRef} type="button" className="button" disabled={busy} onClick={onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className={tone === 'danger' ? 'button button--danger' : 'button button--primary'}
          disabled={busy || confirmDisabled}
          onClick={onConfirm}
        >
          {busy && busyLabel ? busyLabel : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
