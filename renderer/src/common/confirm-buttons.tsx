// The two buttons of an inline confirmation ("Remove" / "Cancel"): the danger action and the way
// back, used wherever the UI asks before doing something that cannot be undone.
export function ConfirmButtons({
  confirmLabel,
  onConfirm,
  onCancel,
  busy = false,
  confirmDisabled = false,
  quietCancel = false,
}: {
  confirmLabel: string;
  onConfirm(): void;
  onCancel(): void;
  /** Disables the confirm button (and Cancel) while the action runs. */
  busy?: boolean;
  /** Disables only the confirm button (the action is not possible now; Cancel still works). */
  confirmDisabled?: boolean;
  quietCancel?: boolean;
}) {
  return (
    <>
      <button
        type="button"
        className="button button--danger button--small"
        disabled={busy || confirmDisabled}
        onClick={onConfirm}
      >
        {confirmLabel}
      </button>
      <button
        type="button"
        className={quietCancel ? 'button button--small button--quiet' : 'button button--small'}
        disabled={busy}
        onClick={onCancel}
      >
        Cancel
      </button>
    </>
  );
}
