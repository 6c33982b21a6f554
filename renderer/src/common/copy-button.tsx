// A small button that copies a value (a server URL) to the clipboard and says so for a moment.
// Disabled while what it would copy may be stale (the host cannot be reached).
import { useEffect, useState } from 'react';

const CONFIRMATION_MS = 1500;

export function CopyButton({
  value,
  label,
  disabled = false,
}: {
  value: string;
  label: string;
  disabled?: boolean;
}) {
  const [outcome, setOutcome] = useState<'idle' | 'copied' | 'failed'>('idle');

  useEffect(() => {
    if (outcome === 'idle') return;
    const timer = setTimeout(() => setOutcome('idle'), CONFIRMATION_MS);
    return () => clearTimeout(timer);
  }, [outcome]);

  const copy = (): void => {
    navigator.clipboard.writeText(value).then(
      () => setOutcome('copied'),
      () => setOutcome('failed'),
    );
  };

  return (
    <button
      type="button"
      className="button button--quiet"
      aria-label={label}
      disabled={disabled}
      title={disabled ? 'State unknown: Grove cannot reach the host' : undefined}
      onClick={copy}
    >
      {outcome === 'copied' ? 'Copied' : outcome === 'failed' ? 'Copy failed' : 'Copy'}
    </button>
  );
}
