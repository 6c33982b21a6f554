// A small button that copies a value (a server URL) to the clipboard and says so for a moment.
import { useEffect, useState } from 'react';

const CONFIRMATION_MS = 1500;

export function CopyButton({ value, label }: { value: string; label: string }) {
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
    <button type="button" className="button button--quiet" aria-label={label} onClick={copy}>
      {outcome === 'copied' ? 'Copied' : outcome === 'failed' ? 'Copy failed' : 'Copy'}
    </button>
  );
}
