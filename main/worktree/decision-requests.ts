// The worktree process's answers to the window's decision requests (`decision-request` in
// shared/worktree-protocol.ts): list the proposals, preview an accept, accept or reject the
// proposal the person saw. Accepting and rejecting are people's actions, so they come only this
// way (the host's HostApi commands), never from an MCP tool. Loaded with the first request, like
// the engine: a worktree process nobody reviews in never builds these schemas.
import { DecisionRequestSchema } from '../../shared/decisions.ts';
import { UserError } from '../platform/errors.ts';
import {
  acceptShownDecision,
  previewAcceptDecision,
  rejectShownDecision,
} from '../reconcile/notarai07/decision-review.ts';
import { listDecisions } from '../reconcile/notarai07/decisions.ts';

/** The result of one request (a UserError when it is refused or invalid). */
export async function answerDecisionRequest(root: string, raw: unknown): Promise<unknown> {
  const parsed = DecisionRequestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new UserError(`invalid decision request: ${parsed.error.issues[0]?.message ?? ''}`);
  }
  const request = parsed.data;
  switch (request.action) {
    case 'list':
      return listDecisions(root);
    case 'plan-accept':
      return previewAcceptDecision(root, request.specPath, request.index);
    case 'accept':
      return acceptShownDecision(root, request.specPath, request.index, request.expected);
    case 'reject': {
      // A blank reason is no reason (NotarAI's reject without --reason): no reject_reason.
      const reason = request.reason?.trim() === '' ? undefined : request.reason;
      return rejectShownDecision(root, request.specPath, request.index, reason, request.expected);
    }
  }
}
