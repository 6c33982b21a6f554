// The token and URLs of one worktree, asked from the host when a view needs them (the token is
// not in the mirrored state: it is a secret, fetched on demand). Asked again when the worktree's
// port changes, and replaced by the answer of a token rotation.
import { useCallback, useEffect, useState } from 'react';
import type { ConnectionInfo } from '../../../shared/model.ts';
import { errorText } from '../common/error-text.ts';
import { useHostStore } from '../common/store-context.tsx';

export type ConnectionInfoState =
  | { state: 'loading' }
  | { state: 'ready'; info: ConnectionInfo }
  | { state: 'error'; message: string };

export function useConnectionInfo(worktreeId: string, port: number) {
  const store = useHostStore();
  const [result, setResult] = useState<ConnectionInfoState>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let cancelled = false;
    store.commands.getConnectionInfo({ worktreeId }).then(
      (info) => {
        if (!cancelled) setResult({ state: 'ready', info });
      },
      (error: unknown) => {
        if (!cancelled) setResult({ state: 'error', message: errorText(error) });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [store, worktreeId, port, generation]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  const replace = useCallback((info: ConnectionInfo) => setResult({ state: 'ready', info }), []);
  return { result, reload, replace };
}
