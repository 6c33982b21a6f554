// The decision proposals of one worktree as the Reconciliation tab reads them: the host's
// listDecisions command (answered by the worktree's process from .notarai/decision-log.json),
// asked again whenever the reconciliation state says the log changed (its decisions revision, which
// the watcher recomputes on every edit: an agent's proposal, `grove decisions`, an editor) and
// after the window's own accept or reject. Accept and reject go through the host too
// (previewAcceptDecision, acceptDecision, rejectDecision): never an MCP tool.
import { useEffect, useState } from 'react';
import type { ListDecisionsResult } from '../../../shared/decisions.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import { errorText } from '../common/error-text.ts';
import { useHostState, useHostStore } from '../common/store-context.tsx';

export type DecisionList =
  | { state: 'stopped' }
  | { state: 'loading' }
  | { state: 'ready'; list: ListDecisionsResult }
  | { state: 'error'; message: string };

/** The worktree's proposals, kept current; `reload` asks again now (after an action). */
export function useDecisionList(worktree: WorktreeState): {
  load: DecisionList;
  reload(): void;
} {
  const store = useHostStore();
  const { snapshot } = useHostState();
  const summary = snapshot?.reconcile[worktree.id]?.decisions;
  const running = worktree.status.state === 'running';
  // The log's revision, and its problem: either changing means the proposals may have.
  const revision = `${summary?.revision ?? 'none'}\n${summary?.problem ?? ''}`;
  const [generation, setGeneration] = useState(0);
  const [answer, setAnswer] = useState<{ key: string; load: DecisionList } | null>(null);
  const key = `${worktree.id}\n${worktree.port}\n${revision}\n${generation}`;

  useEffect(() => {
    if (!running) return;
    let cancelled = false;
    store.commands.listDecisions({ worktreeId: worktree.id }).then(
      (list) => {
        if (!cancelled) setAnswer({ key, load: { state: 'ready', list } });
      },
      (error: unknown) => {
        if (!cancelled) setAnswer({ key, load: { state: 'error', message: errorText(error) } });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [store, worktree.id, running, key]);

  // While a new answer is on its way, the last one stays on screen (no flicker at each edit).
  const shown = answer?.key.startsWith(`${worktree.id}\n`) ? answer.load : null;
  const load: DecisionList = !running ? { state: 'stopped' } : (shown ?? { state: 'loading' });
  return { load, reload: () => setGeneration((n) => n + 1) };
}

/** The parts of a unified diff about `file` (its `diff --git a/X b/X` section), or ''. */
export function diffOfFile(diff: string, file: string): string {
  return diff
    .split(/^(?=diff --git )/m)
    .filter((part) => {
      const header = /^diff --git a\/(.*) b\/(.*)$/m.exec(part);
      return header !== null && (header[1] === file || header[2] === file);
    })
    .join('')
    .replace(/\n$/, '');
}
