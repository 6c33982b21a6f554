// The note of a worktree whose server moved to another port because another program had taken
// its own (WorktreeState.movedFromPort), shown on the Server and Connect tabs: which port it lost,
// which it has now, that clients configured with the old one need the new URL, and the two ways
// to settle it — "Use port N again" (reclaimPort: the host refuses, saying so, while N is still
// taken) and "Keep port M" (keepMovedPort: the note goes).
import { useState } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';

export function PortMovedNote({
  worktree,
  live,
  where,
}: {
  worktree: WorktreeState;
  live: boolean;
  /** Where the note is: the Connect tab points at its configs, which name the new port. */
  where: 'server' | 'connect';
}) {
  const store = useHostStore();
  const [busy, setBusy] = useState<'reclaim' | 'keep' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const from = worktree.movedFromPort;
  if (from === null || from === undefined) return null;
  const { port } = worktree;

  const run = async (action: 'reclaim' | 'keep'): Promise<void> => {
    setBusy(action);
    setError(null);
    try {
      const input = { worktreeId: worktree.id };
      if (action === 'reclaim') await store.commands.reclaimPort(input);
      else await store.commands.keepMovedPort(input);
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(null);
    }
  };

  return (
    <div className="notice port-moved" role="note" aria-label="Port moved">
      <p>
        Port {from} was in use by another program, so this server moved to port {port}. Clients
        configured with port {from} need the new URL
        {where === 'connect' ? ' (the configs below have it)' : ''}, or take port {from} back once
        it is free.
      </p>
      <div className="button-row port-moved__actions">
        <button
          type="button"
          className="button button--small"
          disabled={!live || busy !== null}
          onClick={() => void run('reclaim')}
        >
          {busy === 'reclaim' ? `Moving to port ${from}…` : `Use port ${from} again`}
        </button>
        <button
          type="button"
          className="button button--small"
          disabled={!live || busy !== null}
          onClick={() => void run('keep')}
        >
          Keep port {port}
        </button>
      </div>
      {error && (
        <p className="notice notice--error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
