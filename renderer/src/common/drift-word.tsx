// NotarAI 0.7's drift status in words (never colour alone): "0.42 review", with a coloured mark
// beside it and a tooltip saying what the word means. The Reconciliation table (per spec), the
// sidebar (per worktree) and the Coverage tab (overall) show it the same way.
import type { DriftStatus } from '../../../shared/notarai-check.ts';

const MEANINGS: Record<DriftStatus, string> = {
  healthy: 'healthy: below 0.3',
  review: 'review: 0.3 to 0.6',
  overdue: 'overdue: 0.6 or more',
};

/** What a drift score means, for a tooltip or a screen reader. */
export function driftDescription(score: number, status: DriftStatus): string {
  return `Drift score ${score.toFixed(2)} of 1, ${MEANINGS[status]}`;
}

export function DriftWord({
  score,
  status,
  showScore = true,
}: {
  score: number;
  status: DriftStatus;
  /** False where space is short (the sidebar): the word alone, the score in the tooltip. */
  showScore?: boolean;
}) {
  return (
    <span className={`drift drift--${status}`} title={driftDescription(score, status)}>
      <span className="drift__mark" aria-hidden="true" />
      {showScore && <span className="drift__score">{score.toFixed(2)}</span>}
      <span className="drift__word">{status}</span>
    </span>
  );
}
