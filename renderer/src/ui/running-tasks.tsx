// The just tasks a worktree's server is running (shown in its Server tab while there are any):
// each with its arguments, who asked, how long it has run, and a Stop button that ends the recipe
// and what it started (stopTask); its client gets an error saying it was stopped in Grove.
import { useState } from 'react';
import type { WorktreeState } from '../../../shared/model.ts';
import { duration } from '../common/format.ts';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { useNow } from '../common/use-now.ts';

export function RunningTasks({ worktree, live }: { worktree: WorktreeState; live: boolean }) {
  const store = useHostStore();
  const now = useNow(1000);
  const [problem, setProblem] = useState<string | null>(null);
  const tasks = worktree.runningTasks ?? [];
  if (tasks.length === 0) return null;
  const stop = (runId: string): void => {
    setProblem(null);
    store.commands.stopTask({ worktreeId: worktree.id, runId }).catch((error: unknown) => {
      setProblem(errorText(error));
    });
  };
  return (
    <section className="card" aria-label="Running tasks">
      <h3 className="card__title">Running tasks</h3>
      <ol className="calls">
        {tasks.map((task) => (
          <li key={task.id} className="call call--running">
            <span className="call__tool">
              just {task.task}
              {task.args.length > 0 && <code> {task.args.join(' ')}</code>}
            </span>
            <span className="call__client">{task.clientName ?? 'unknown client'}</span>
            <span className="call__duration">
              running for {duration(Math.max(0, now - task.startedAt))}
            </span>
            <button
              type="button"
              className="button button--small"
              aria-label={`Stop just ${task.task}`}
              disabled={!live}
              onClick={() => stop(task.id)}
            >
              Stop
            </button>
          </li>
        ))}
      </ol>
      {problem && (
        <p className="notice notice--error" role="alert">
          Could not stop the task: {problem}
        </p>
      )}
    </section>
  );
}
