// NotarAI 0.7's decision proposals (`.notarai/decision-log.json`): read, listed, proposed, and
// accepted or rejected by a person — one module for `grove decisions` (main/notarai-cli/), the
// `list_decisions` and `propose_decision` tools (main/tools/decision-tools.ts) and the window.
// NotarAI's semantics (src/core/decisions.rs): the index is the entry's position in the log;
// accept appends {date, choice, rationale} to the spec's `decisions:` and removes the entry (the
// indexes after it shift); reject sets `status: rejected` and `reject_reason`. The log is written
// as NotarAI's serde_json writes it (its key order, two-space indent, no final newline).
//
// Where Grove goes further (docs/notarai-compatibility.md): the edited spec is validated before
// anything is written, so a decision that would break the spec leaves both files byte for byte as
// they were; both files are read and written through the confined layer (a symlink, a FIFO, a
// device or a file over MAX_DECISION_LOG_BYTES is refused, never followed or waited on) and
// written atomically (temp file + rename), the spec first and put back if the log cannot be
// written; a log that cannot be read or is not valid is an error naming the problem (NotarAI
// takes it for an empty log); keys NotarAI does not know are kept; the spec's comments and layout
// are kept and a rationale's line breaks survive (decisions-spec-edit.ts). Mutations of one
// worktree's log run one at a time in this process, and each checks, once its new text is on disk
// and right before the rename, that the file it replaces did not change since it was read
// (another process), so no other writer's change is lost to a race.
import path from 'node:path';
import {
  DecisionLogSchema,
  type Decision,
  type DecisionLogEntry,
  type DecisionLogFile,
  type ListDecisionsResult,
  type ProposeDecisionResult,
} from '../../../shared/decisions.ts';
import {
  lstatNoFollowInsideRoot,
  readFileInsideRoot,
  statInsideRoot,
  writeFileAtomicInsideRoot,
} from '../../platform/confined-fs.ts';
import { UserError } from '../../platform/errors.ts';
import { editAndValidateSpecOffTheLoop } from './decisions-spec-edit.ts';
import { MAX_CONFIG_BYTES } from './notarai-configs.ts';
import { isSpecPath, MAX_SPEC_BYTES, NOTARAI_DIR } from '../specs/spec-paths.ts';

export const DECISION_LOG_PATH = `${NOTARAI_DIR}/decision-log.json`;
/** The log is read with the configs' cap (score reads it too); a write never makes it bigger. */
export const MAX_DECISION_LOG_BYTES = MAX_CONFIG_BYTES;
/** Bounds of a proposal made through propose_decision (a choice is a line, a rationale a page). */
export const PROPOSAL_LIMITS = {
  choice: 500,
  rationale: 20_000,
  origin: 100,
  relatedFiles: 200,
} as const;

/** The log as read: its entries, and its text (null: there is no log). */
export interface LoadedDecisionLog {
  readonly log: DecisionLogFile;
  readonly text: string | null;
}

/** Reads the log through the confined layer; a missing log is an empty one. */
export async function readDecisionLog(root: string): Promise<LoadedDecisionLog> {
  let bytes: Buffer;
  try {
    bytes = await readFileInsideRoot(root, DECISION_LOG_PATH, {
      maxBytes: MAX_DECISION_LOG_BYTES,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (message.startsWith('no such file or directory'))
      return { log: { proposals: [] }, text: null };
    throw new UserError(`cannot read ${DECISION_LOG_PATH}: ${message}`, {
      code: error instanceof UserError ? error.code : 'refused',
    });
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new UserError(`${DECISION_LOG_PATH} is not valid: not UTF-8 text`);
  }
  return { log: parseDecisionLog(text.replace(/^\uFEFF/, '')), text };
}

/** The log's text as data, or a UserError naming what is wrong (and where). */
export function parseDecisionLog(text: string): DecisionLogFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${DECISION_LOG_PATH} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = DecisionLogSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path
      .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
      .join('')
      .replace(/^\./, '');
    throw new UserError(
      `${DECISION_LOG_PATH} is not valid: ${where === '' ? '' : `${where}: `}${issue.message}`,
    );
  }
  return parsed.data;
}

const ENTRY_KEYS = [
  'spec_path',
  'date',
  'choice',
  'rationale',
  'origin',
  'status',
  'related_files',
  'reject_reason',
];

/** One entry as NotarAI writes it (empty related_files and null reject_reason left out). */
function entryJson(entry: DecisionLogEntry): Record<string, unknown> {
  return Object.fromEntries([
    ['spec_path', entry.spec_path],
    ['date', entry.date],
    ['choice', entry.choice],
    ['rationale', entry.rationale],
    ['origin', entry.origin],
    ['status', entry.status],
    ...(entry.related_files?.length ? [['related_files', entry.related_files]] : []),
    ...(typeof entry.reject_reason === 'string' ? [['reject_reason', entry.reject_reason]] : []),
    ...Object.entries(entry).filter(([key]) => !ENTRY_KEYS.includes(key)),
  ]);
}

/** The log's text as NotarAI's `save` writes it (serde_json pretty, no final newline). */
export function serializeDecisionLog(log: DecisionLogFile): string {
  const file = Object.fromEntries([
    ['proposals', log.proposals.map(entryJson)],
    ...Object.entries(log).filter(([key]) => key !== 'proposals'),
  ]);
  return JSON.stringify(file, null, 2);
}

/** An entry with its index, as the tools and the window show it. */
export function toDecision(entry: DecisionLogEntry, index: number): Decision {
  return {
    index,
    spec_path: entry.spec_path,
    date: entry.date,
    choice: entry.choice,
    rationale: entry.rationale,
    origin: entry.origin,
    status: entry.status,
    related_files: entry.related_files ?? [],
    reject_reason: entry.reject_reason ?? null,
  };
}

export interface DecisionFilter {
  /** Only entries with this status (NotarAI's `--status`). */
  status?: string | undefined;
  /** Only entries of this spec (Grove's addition, for the tool and the window). */
  specPath?: string | undefined;
}

/** The log's entries that pass the filter, with their indexes (`decisions list`). */
export async function listDecisions(
  root: string,
  filter: DecisionFilter = {},
): Promise<ListDecisionsResult> {
  const { log } = await readDecisionLog(root);
  return {
    decisions: log.proposals
      .map(toDecision)
      .filter(
        (decision) =>
          (filter.status === undefined || decision.status === filter.status) &&
          (filter.specPath === undefined || decision.spec_path === filter.specPath),
      ),
    total: log.proposals.length,
    proposed: log.proposals.filter((entry) => entry.status === 'proposed').length,
    log_path: DECISION_LOG_PATH,
  };
}

// ---- one mutation at a time per worktree -------------------------------------------------------

const running = new Map<string, Promise<unknown>>();

/** Runs `task` after every earlier mutation of `root`'s log in this process has ended. */
function serialised<T>(root: string, task: () => Promise<T>): Promise<T> {
  const before = running.get(root) ?? Promise.resolve();
  const result = before.then(task, task);
  const settled = result.then(
    () => undefined,
    () => undefined,
  );
  running.set(root, settled);
  void settled.then(() => {
    if (running.get(root) === settled) running.delete(root);
  });
  return result;
}

/** Text of a file now (null: missing), to prove nothing changed it since it was read. */
async function currentText(root: string, relative: string, maxBytes: number) {
  try {
    return (await readFileInsideRoot(root, relative, { maxBytes })).toString('utf8');
  } catch (error) {
    if ((error as Error).message.startsWith('no such file or directory')) return null;
    throw error;
  }
}

async function unchangedSinceRead(
  root: string,
  relative: string,
  text: string | null,
  maxBytes: number,
): Promise<void> {
  if ((await currentText(root, relative, maxBytes)) !== text) {
    throw new UserError(
      `${relative} changed while the decision was being recorded; nothing was written (run the ` +
        'command again)',
      { code: 'busy' },
    );
  }
}

/** The log written atomically, if it still holds what was read and the result fits the cap. */
async function writeLog(root: string, loaded: LoadedDecisionLog, log: DecisionLogFile) {
  const text = serializeDecisionLog(log);
  if (Buffer.byteLength(text) > MAX_DECISION_LOG_BYTES) {
    throw new UserError(
      `${DECISION_LOG_PATH} would be larger than ${MAX_DECISION_LOG_BYTES} bytes; accept or ` +
        'reject some proposals first (nothing was written)',
      { code: 'too-large' },
    );
  }
  await writeFileAtomicInsideRoot(root, DECISION_LOG_PATH, text, {
    mode: modeOf(root, DECISION_LOG_PATH),
    // Checked once the new text is on disk, right before the rename: the write and flush are no
    // window for another process's write to be lost.
    beforeRename: () =>
      unchangedSinceRead(root, DECISION_LOG_PATH, loaded.text, MAX_DECISION_LOG_BYTES),
  });
  return text;
}

/** The permission bits of an existing file (kept when it is replaced), else 0644. */
function modeOf(root: string, relative: string): number {
  const stats = lstatNoFollowInsideRoot(root, relative);
  return stats?.isFile() ? stats.mode & 0o777 : 0o644;
}

// ---- accept and reject (people only: the CLI and the window) -----------------------------------

/** NotarAI's checks, in its order: the spec named, then the index, then the status. */
function proposalFor(
  log: DecisionLogFile,
  specPath: string,
  index: number,
  verb: 'accept' | 'reject',
): DecisionLogEntry {
  const entry = log.proposals[index];
  if (entry && entry.spec_path !== specPath) {
    throw new UserError(
      `proposal at index ${index} belongs to '${entry.spec_path}', not '${specPath}'`,
    );
  }
  if (!entry) {
    throw new UserError(`Index ${index} out of range (log has ${log.proposals.length} entries)`, {
      code: 'not-found',
    });
  }
  if (entry.status !== 'proposed') {
    throw new UserError(`Cannot ${verb}: decision is already '${entry.status}'`);
  }
  return entry;
}

/** What accepting a proposal would write: both files' text before and after. */
export interface AcceptPlan {
  /** The proposal, as it was (status "proposed"). */
  readonly decision: Decision;
  readonly specPath: string;
  readonly specBefore: string;
  readonly specAfter: string;
  readonly logBefore: string | null;
  readonly logAfter: string;
  /** Log entries left. */
  readonly remaining: number;
}

/**
 * The change accepting proposal `index` of `specPath` makes, validated, without writing anything
 * (the window shows it before a person confirms). A UserError when NotarAI refuses (wrong spec,
 * out of range, not proposed), when the spec is not a spec file under .notarai/ or cannot be read,
 * or when the spec with the decision would not validate.
 */
export async function planAcceptDecision(
  root: string,
  specPath: string,
  index: number,
): Promise<AcceptPlan> {
  const loaded = await readDecisionLog(root);
  const entry = proposalFor(loaded.log, specPath, index, 'accept');
  if (!isSpecPath(specPath) || path.posix.normalize(specPath) !== specPath) {
    throw new UserError(`not a spec file under ${NOTARAI_DIR}/: ${specPath}`, { code: 'refused' });
  }
  let specBytes: Buffer;
  try {
    specBytes = await readFileInsideRoot(root, specPath, { maxBytes: MAX_SPEC_BYTES });
  } catch (error) {
    throw new UserError(`cannot read ${specPath}: ${(error as Error).message}`, {
      code: error instanceof UserError ? error.code : 'not-found',
    });
  }
  let specBefore: string;
  try {
    // Bytes that are not UTF-8 would come back as U+FFFD: the file would change where no one
    // asked. A byte-order mark is kept as it is.
    specBefore = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(specBytes);
  } catch {
    throw new UserError(
      `${specPath} is not UTF-8 text, so Grove does not rewrite it (nothing was written)`,
    );
  }
  if ([entry.date, entry.choice, entry.rationale].some((text) => LONE_SURROGATE.test(text))) {
    throw new UserError(
      `the proposal at index ${index} is not valid Unicode text (a lone surrogate), so it ` +
        `cannot go into ${specPath} (nothing was written)`,
    );
  }
  // Two YAML parses and a schema check: off the event loop for a big spec.
  const edit = await editAndValidateSpecOffTheLoop(specPath, specBefore, entry);
  if (!edit.ok && edit.stage === 'edit') {
    throw new UserError(
      `cannot add the decision to ${specPath}: ${edit.message} (nothing was written)`,
    );
  }
  if (!edit.ok) {
    throw new UserError(
      `Spec validation failed after accepting decision: ${edit.message} (nothing was written: ` +
        `${specPath} and ${DECISION_LOG_PATH} are as they were)`,
    );
  }
  const specAfter = edit.text;
  const proposals = loaded.log.proposals.filter((_, position) => position !== index);
  return {
    decision: toDecision(entry, index),
    specPath,
    specBefore,
    specAfter,
    logBefore: loaded.text,
    logAfter: serializeDecisionLog({ ...loaded.log, proposals }),
    remaining: proposals.length,
  };
}

/**
 * A last check of what is about to be written, run after the files were read and before anything
 * is written, in turn with the log's other mutations (the window's: the proposal it showed is
 * still the one at that index; decision-review.ts). Throwing refuses, nothing written.
 */
export interface DecisionCheck<T> {
  check?(what: T): void;
}

/**
 * Accepts proposal `index` of `specPath` (`decisions accept`): the spec gets the decision, the log
 * loses the entry; both written atomically, the spec first and put back if the log cannot be
 * written. Returns the decision, status "accepted".
 */
export function acceptDecision(
  root: string,
  specPath: string,
  index: number,
  options: DecisionCheck<AcceptPlan> = {},
): Promise<Decision> {
  return serialised(root, async () => {
    const plan = await planAcceptDecision(root, specPath, index);
    options.check?.(plan);
    const logUnchanged = () =>
      unchangedSinceRead(root, DECISION_LOG_PATH, plan.logBefore, MAX_DECISION_LOG_BYTES);
    const specMode = modeOf(root, plan.specPath);
    // Each file checked right before its rename (once its new text is on disk).
    await writeFileAtomicInsideRoot(root, plan.specPath, plan.specAfter, {
      mode: specMode,
      beforeRename: async () => {
        await unchangedSinceRead(root, plan.specPath, plan.specBefore, MAX_SPEC_BYTES);
        await logUnchanged();
      },
    });
    try {
      await writeFileAtomicInsideRoot(root, DECISION_LOG_PATH, plan.logAfter, {
        mode: modeOf(root, DECISION_LOG_PATH),
        beforeRename: logUnchanged,
      });
    } catch (error) {
      await writeFileAtomicInsideRoot(root, plan.specPath, plan.specBefore, { mode: specMode });
      throw new UserError(
        `cannot write ${DECISION_LOG_PATH}: ${(error as Error).message} (${plan.specPath} was ` +
          'put back as it was)',
      );
    }
    return { ...plan.decision, status: 'accepted' };
  });
}

/**
 * Rejects proposal `index` of `specPath` (`decisions reject`): `status: rejected`, and
 * `reject_reason` set to `reason` (removed when there is none). Only the log is written.
 */
export function rejectDecision(
  root: string,
  specPath: string,
  index: number,
  reason?: string,
  options: DecisionCheck<Decision> = {},
): Promise<Decision> {
  return serialised(root, async () => {
    const loaded = await readDecisionLog(root);
    const entry = proposalFor(loaded.log, specPath, index, 'reject');
    options.check?.(toDecision(entry, index));
    const proposals = loaded.log.proposals.map((entry, position) => {
      if (position !== index) return entry;
      const { reject_reason: _old, ...rest } = entry;
      return {
        ...rest,
        status: 'rejected',
        ...(reason === undefined ? {} : { reject_reason: reason }),
      };
    });
    await writeLog(root, loaded, { ...loaded.log, proposals });
    return toDecision(proposals[index]!, index);
  });
}

// ---- propose (agents may: the `propose_decision` tool) -----------------------------------------

export interface ProposalInput {
  spec_path: string;
  choice: string;
  rationale: string;
  related_files?: string[] | undefined;
  origin?: string | undefined;
  /** YYYY-MM-DD; default: today (local time). */
  date?: string | undefined;
}

/** Today as YYYY-MM-DD, local time. */
function today(now: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** True for an RFC 3339 full-date (what the spec schema's `format: date` takes). */
function isFullDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/**
 * A lone surrogate: JSON.stringify writes it as a `\ud800` escape, which NotarAI's serde_json
 * refuses (so it takes the whole log for an empty one), and UTF-8 cannot hold it (an accepted
 * decision would put U+FFFD in the spec).
 */
const LONE_SURROGATE = /\p{Cs}/u;

function checkText(name: string, value: string, max: number, { line = false } = {}): void {
  if (value.trim() === '') throw new UserError(`${name} must not be empty`);
  if (value.length > max) {
    throw new UserError(`${name} is ${value.length} characters long; the limit is ${max}`, {
      code: 'too-large',
    });
  }
  if (line && /[\r\n]/.test(value)) throw new UserError(`${name} must be one line`);
  if (CONTROL.test(value)) throw new UserError(`${name} must not contain control characters`);
  if (LONE_SURROGATE.test(value)) {
    throw new UserError(`${name} is not valid Unicode text (a lone surrogate)`);
  }
}

/** A proposal checked: what the log will hold. A UserError names the first problem. */
async function checkedProposal(
  root: string,
  input: ProposalInput,
  now: Date,
): Promise<DecisionLogEntry> {
  const specPath = input.spec_path;
  if (!isSpecPath(specPath) || path.posix.normalize(specPath) !== specPath) {
    throw new UserError(
      `spec_path must name a spec file under ${NOTARAI_DIR}/ (e.g. ".notarai/auth.spec.yaml"), ` +
        `got ${JSON.stringify(specPath)}`,
    );
  }
  const { stats } = await statInsideRoot(root, specPath).catch((error: unknown) => {
    throw new UserError(`no such spec: ${specPath} (${(error as Error).message})`, {
      code: 'not-found',
    });
  });
  if (!stats.isFile()) throw new UserError(`not a spec file: ${specPath}`, { code: 'refused' });
  checkText('choice', input.choice, PROPOSAL_LIMITS.choice, { line: true });
  checkText('rationale', input.rationale, PROPOSAL_LIMITS.rationale);
  const origin = input.origin ?? 'reconciliation';
  checkText('origin', origin, PROPOSAL_LIMITS.origin, { line: true });
  const date = input.date ?? today(now);
  if (!isFullDate(date)) {
    throw new UserError(`date must be a date written YYYY-MM-DD, got ${JSON.stringify(date)}`);
  }
  const related = input.related_files ?? [];
  if (related.length > PROPOSAL_LIMITS.relatedFiles) {
    throw new UserError(
      `related_files lists ${related.length} files; the limit is ${PROPOSAL_LIMITS.relatedFiles}`,
      { code: 'too-large' },
    );
  }
  for (const file of related) {
    const normal = path.posix.normalize(file);
    if (
      file === '' ||
      file.length > 4096 ||
      path.posix.isAbsolute(file) ||
      normal !== file ||
      normal.startsWith('../') ||
      CONTROL.test(file) ||
      LONE_SURROGATE.test(file) ||
      /[\r\n]/.test(file)
    ) {
      throw new UserError(
        `related_files: ${JSON.stringify(file.slice(0, 200))} is not a path relative to the ` +
          'worktree root (no "..", no leading "/")',
      );
    }
  }
  return {
    spec_path: specPath,
    date,
    choice: input.choice,
    rationale: input.rationale,
    origin,
    status: 'proposed',
    ...(related.length > 0 ? { related_files: [...related] } : {}),
  };
}

/**
 * Appends a proposal (status "proposed") to the log: the only file written, atomically, and only
 * if the log can be read and stays under MAX_DECISION_LOG_BYTES. A person accepts or rejects it.
 */
export function proposeDecision(
  root: string,
  input: ProposalInput,
  now = new Date(),
): Promise<ProposeDecisionResult> {
  return serialised(root, async () => {
    const entry = await checkedProposal(root, input, now);
    const loaded = await readDecisionLog(root);
    const proposals = [...loaded.log.proposals, entry];
    await writeLog(root, loaded, { ...loaded.log, proposals });
    return {
      decision: toDecision(entry, proposals.length - 1),
      total: proposals.length,
      log_path: DECISION_LOG_PATH,
    };
  });
}
