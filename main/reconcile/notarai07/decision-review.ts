// The window's review of decision proposals, on top of decisions.ts (the same reads, checks and
// atomic writes as `grove decisions`): a preview of an accept — the spec's change as a unified
// diff and the SHA-256 of the spec text it applies to — and an accept or reject that writes only
// what the person saw: the proposal at that index must still be the one shown (every field), and
// for an accept the spec must still be the text whose change was shown. Both are checked in turn
// with the log's other mutations, after the files are read and before anything is written, so a
// log or spec changed meanwhile (by an agent's proposal, the CLI, an editor) is refused untouched.
import type {
  AcceptPreview,
  Decision,
  DecisionActionResult,
  DecisionExpectation,
} from '../../../shared/decisions.ts';
import { unifiedDiff } from '../../../shared/changed-lines.ts';
import { nodeCrypto } from '../../platform/builtins.ts';
import { UserError } from '../../platform/errors.ts';
import {
  acceptDecision,
  DECISION_LOG_PATH,
  planAcceptDecision,
  rejectDecision,
} from './decisions.ts';

/** Lines of context around the spec's change in a preview. */
const PREVIEW_CONTEXT_LINES = 3;

function sha256(text: string): string {
  return nodeCrypto().createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What accepting proposal `index` of `specPath` would write (nothing is written). */
export async function previewAcceptDecision(
  root: string,
  specPath: string,
  index: number,
): Promise<AcceptPreview> {
  const plan = await planAcceptDecision(root, specPath, index);
  return {
    decision: plan.decision,
    specPath: plan.specPath,
    specDiff: unifiedDiff(plan.specPath, plan.specBefore, plan.specAfter, PREVIEW_CONTEXT_LINES),
    specSha256: sha256(plan.specBefore),
    remaining: plan.remaining,
    logPath: DECISION_LOG_PATH,
  };
}

/** True when two proposals are the same entry at the same index (every field). */
export function sameDecision(a: Decision, b: Decision): boolean {
  return (
    a.index === b.index &&
    a.spec_path === b.spec_path &&
    a.date === b.date &&
    a.choice === b.choice &&
    a.rationale === b.rationale &&
    a.origin === b.origin &&
    a.status === b.status &&
    a.reject_reason === b.reject_reason &&
    a.related_files.length === b.related_files.length &&
    a.related_files.every((file, position) => file === b.related_files[position])
  );
}

function refuseChanged(what: string): never {
  throw new UserError(
    `${what} changed since it was shown; nothing was written. Look at it again, then decide.`,
    { code: 'busy' },
  );
}

/** Accepts the proposal shown, only if it and the spec are still as shown. */
export async function acceptShownDecision(
  root: string,
  specPath: string,
  index: number,
  expected: DecisionExpectation,
): Promise<DecisionActionResult> {
  if (expected.specSha256 === undefined) {
    throw new UserError('accepting from the window needs the spec text the preview showed');
  }
  const decision = await acceptDecision(root, specPath, index, {
    check: (plan) => {
      if (!sameDecision(plan.decision, expected.decision)) refuseChanged(`proposal ${index}`);
      if (sha256(plan.specBefore) !== expected.specSha256) refuseChanged(specPath);
    },
  });
  return { decision, written: [specPath, DECISION_LOG_PATH] };
}

/** Rejects the proposal shown (with `reason`, if any), only if it is still as shown. */
export async function rejectShownDecision(
  root: string,
  specPath: string,
  index: number,
  reason: string | undefined,
  expected: DecisionExpectation,
): Promise<DecisionActionResult> {
  const decision = await rejectDecision(root, specPath, index, reason, {
    check: (current) => {
      if (!sameDecision(current, expected.decision)) refuseChanged(`proposal ${index}`);
    },
  });
  return { decision, written: [DECISION_LOG_PATH] };
}
