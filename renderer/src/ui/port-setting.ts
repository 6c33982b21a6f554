// The Server tab's port field, its pure parts: what is wrong with a typed port, and how the host's
// answer to setWorktreePort reads (it restarts a running server on the new port, which may move on
// to the next free one when another program holds it).
import { WORKTREE_PORT_MAX, WORKTREE_PORT_MIN } from '../../../shared/host-api.ts';
import type { WorktreeState } from '../../../shared/model.ts';

const RANGE = `enter a port from ${WORKTREE_PORT_MIN} to ${WORKTREE_PORT_MAX}`;

/** Why `text` is not a port a worktree can move to, or null when it is one. */
export function portProblem(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed === '') return `No port given: ${RANGE}.`;
  const port = Number(trimmed);
  if (!Number.isFinite(port)) return `“${trimmed}” is not a number: ${RANGE}.`;
  if (!Number.isInteger(port)) return `${trimmed} is not a whole number: ${RANGE}.`;
  if (port < WORKTREE_PORT_MIN) {
    return `Port ${port} is below ${WORKTREE_PORT_MIN} (reserved for the system): ${RANGE}.`;
  }
  if (port > WORKTREE_PORT_MAX) return `Port ${port} is above ${WORKTREE_PORT_MAX}: ${RANGE}.`;
  return null;
}

export interface PortOutcome {
  tone: 'ok' | 'error';
  text: string;
}

/**
 * How a saved port reads, from the worktree as the host answered (after restarting the server if
 * it was running).
 */
export function portOutcome(
  requested: number,
  wasRunning: boolean,
  result: WorktreeState,
): PortOutcome {
  const { status } = result;
  if (!wasRunning || status.state === 'stopped' || status.state === 'starting') {
    return {
      tone: 'ok',
      text: `Saved: the server will listen on port ${result.port} when it starts.`,
    };
  }
  if (status.state === 'error') {
    return {
      tone: 'error',
      text: `Port ${requested} saved, but the server did not start again: ${status.message}`,
    };
  }
  return status.port === requested
    ? { tone: 'ok', text: `Saved: the server restarted on port ${status.port}.` }
    : {
        tone: 'ok',
        text: `Saved, but port ${requested} was in use: the server restarted on port ${status.port}.`,
      };
}
