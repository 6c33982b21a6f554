// Adds an accepted decision to a spec's `decisions:` list, keeping every other byte of the file:
// the spec is parsed with the `yaml` package only to find where the entry goes (the end of the
// list, or where NotarAI would put a new section), and the entry's text is spliced in there. So
// comments, blank lines, quoting and key order stay as the author wrote them. NotarAI 0.7 splices
// raw text too, but always two spaces in, after the list's trailing blank lines and comments, so
// an empty flow list (`decisions: []`) or a list indented otherwise becomes YAML that does not
// parse (left so in the file); and it writes the rationale as a folded block, which joins lines.
//
// The entry is written as NotarAI writes it — `date` and `choice` single-quoted, the rationale a
// `>` block (one line) — except that a rationale of several lines is a `|` block, so its line
// breaks survive. Its value ends with one newline, as NotarAI's block does. The result is parsed
// again and must equal the spec before plus the entry, or nothing is returned (an error).
// The edit and the schema check of the result run on a worker thread for a spec over
// MAIN_THREAD_SPEC_BYTES (editAndValidateSpecOffTheLoop): a worktree process previewing or
// accepting a decision in a big spec keeps answering its clients and health checks.
import { isDeepStrictEqual } from 'node:util';
import { isMap, isPair, isScalar, isSeq, Scalar, stringify, YAMLMap, YAMLSeq } from 'yaml';
import type { Document, Pair } from 'yaml';
import { UserError } from '../../platform/errors.ts';
import { nextSlice } from '../../platform/time-slices.ts';
import { WorkersUnavailableError, workerPool } from '../../platform/worker-pool.ts';
import {
  formatSpecError,
  MAIN_THREAD_SPEC_BYTES,
  SPEC_PARSE_DEADLINE_MS,
} from '../specs/spec-loader.ts';
import { validateSpecText } from '../specs/spec-validate.ts';
import { parseSpecYaml } from '../specs/spec-yaml.ts';

/** What a spec's `decisions` entry holds (NotarAI writes these three keys). */
export interface SpecDecision {
  date: string;
  choice: string;
  rationale: string;
}

/** Where NotarAI puts a new `decisions:` section: before the first of these it finds. */
const SECTION_BEFORE = ['artifacts', 'constraints', 'invariants'] as const;

/** The value NotarAI's block scalar gives a rationale: its text and one final newline. */
export function rationaleValue(rationale: string): string {
  const trimmed = rationale.replace(/\n+$/, '');
  return trimmed === '' ? '' : `${trimmed}\n`;
}

/** The spec as data (what the edit must leave unchanged, the new entry aside). */
function specData(doc: Document): unknown {
  return doc.toJS({ maxAliasCount: 1000 });
}

/** The entry as a one-item block sequence, at column 0, lines ending "\n". */
function entryText(decision: SpecDecision, styled: boolean): string {
  const rationale = rationaleValue(decision.rationale);
  const date = new Scalar(decision.date);
  const choice = new Scalar(decision.choice);
  const why = new Scalar(rationale);
  if (styled) {
    date.type = Scalar.QUOTE_SINGLE;
    choice.type = Scalar.QUOTE_SINGLE;
    why.type =
      rationale === ''
        ? Scalar.QUOTE_SINGLE
        : rationale.indexOf('\n') < rationale.length - 1
          ? Scalar.BLOCK_LITERAL
          : Scalar.BLOCK_FOLDED;
  }
  const seq = new YAMLSeq();
  const entry = new YAMLMap();
  entry.set('date', date);
  entry.set('choice', choice);
  entry.set('rationale', why);
  seq.items.push(entry);
  return stringify(seq, { lineWidth: 0, indent: 2 });
}

/** `text` with every line but empty ones indented by `column` spaces. */
function indent(text: string, column: number): string {
  const pad = ' '.repeat(column);
  return text.replace(/^(?=[^\n])/gm, pad);
}

/** Offset of the start of the line holding `offset`. */
function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** Offset just past the end of the line holding `offset` (its "\n"), or the text's end. */
function afterLine(text: string, offset: number): number {
  const newline = text.indexOf('\n', Math.max(0, offset));
  return newline === -1 ? text.length : newline + 1;
}

const isBlank = (line: string) => line.trim() === '';

/** The top-level pair of `key`, if any. */
function topPair(doc: Document, key: string): Pair | undefined {
  if (!isMap(doc.contents)) return undefined;
  return doc.contents.items.find(
    (pair): pair is Pair => isPair(pair) && isScalar(pair.key) && pair.key.value === key,
  );
}

/** The column of the items of the spec's first top-level block list (NotarAI's 2 without one). */
function listColumn(doc: Document, text: string): number {
  if (!isMap(doc.contents)) return 2;
  for (const pair of doc.contents.items) {
    const value = pair.value;
    if (isSeq(value) && !value.flow && value.items.length > 0 && value.range) {
      return value.range[0] - lineStart(text, value.range[0]);
    }
  }
  return 2;
}

/** A replacement of text[start, end) by `insert` (lines ending "\n"). */
interface Splice {
  start: number;
  end: number;
  insert: string;
}

/** Where the entry goes, or undefined when the document's shape calls for Document editing. */
function splice(
  doc: Document,
  text: string,
  entry: (column: number) => string,
): Splice | undefined {
  if (!isMap(doc.contents) || doc.contents.flow) return undefined;
  const existing = topPair(doc, 'decisions');
  if (existing) {
    const list = existing.value;
    const key = existing.key as Scalar;
    if (isSeq(list) && !list.flow && list.items.length > 0 && list.range) {
      // After the last entry (and the rest of its line), before any blank line or comment.
      const last = list.items[list.items.length - 1] as { range?: [number, number, number] };
      if (!last.range) return undefined;
      const at = afterLine(text, last.range[1] - 1);
      const column = list.range[0] - lineStart(text, list.range[0]);
      const lead = at === text.length && !text.endsWith('\n') ? '\n' : '';
      return { start: at, end: at, insert: `${lead}${entry(column)}` };
    }
    if (list !== null && !(isScalar(list) && list.value === null) && !(isSeq(list) && list.flow)) {
      return undefined; // not a list: the spec is invalid, and validation says so
    }
    // `decisions:` with nothing, `~`, or a flow list: written again as a block list.
    const items = isSeq(list) ? list.items.map((item) => stringify(item, { lineWidth: 0 })) : [];
    if (isSeq(list) && list.items.some((item) => !isMap(item) && !isScalar(item))) return undefined;
    const start = key.range?.[0];
    const end = (list as { range?: [number, number, number] } | null)?.range?.[1] ?? key.range?.[1];
    if (start === undefined || end === undefined) return undefined;
    const column = listColumn(doc, text);
    const kept = items.map((item) => indent(`- ${item.replace(/\n(?=.)/g, '\n  ')}`, column));
    const at = afterLine(text, end - 1);
    return { start, end: at, insert: `decisions:\n${kept.join('')}${entry(column)}` };
  }
  const column = listColumn(doc, text);
  const section = `decisions:\n${entry(column)}`;
  const anchor = SECTION_BEFORE.map((name) => topPair(doc, name)).find((pair) => pair);
  const anchorStart = (anchor?.key as Scalar | undefined)?.range?.[0];
  if (anchorStart === undefined) {
    // At the end, after a blank line (as NotarAI).
    const end = text.length;
    const newline = text === '' || text.endsWith('\n') ? '' : '\n';
    const lines = `${text}${newline}`.split('\n');
    const blankBefore = text === '' || isBlank(lines[lines.length - 2] ?? '');
    return { start: end, end, insert: `${newline}${blankBefore ? '' : '\n'}${section}` };
  }
  // Before the anchor's key and the comment lines right above it (NotarAI puts it between them),
  // with a blank line on each side.
  let at = lineStart(text, anchorStart);
  while (at > 0) {
    const previous = lineStart(text, at - 1);
    if (!text.slice(previous, at).startsWith('#')) break;
    at = previous;
  }
  const before = at === 0 ? '' : text.slice(lineStart(text, at - 1), at);
  const lead = at === 0 || isBlank(before) ? '' : '\n';
  return { start: at, end: at, insert: `${lead}${section}\n` };
}

/** The same edit on the Document (comments kept, layout re-written): flow-style specs only. */
function documentEdit(doc: Document, decision: SpecDecision): string {
  const copy = doc.clone();
  const entry = copy.createNode({
    date: decision.date,
    choice: decision.choice,
    rationale: rationaleValue(decision.rationale),
  });
  const list = copy.get('decisions', true);
  if (isSeq(list)) list.items.push(entry);
  else copy.set('decisions', copy.createNode([entry]));
  return copy.toString({ lineWidth: 0 });
}

/**
 * The spec text with `decision` appended to its `decisions:` list (the section created before
 * `artifacts:`, `constraints:` or `invariants:`, else at the end, as NotarAI does), every other
 * byte kept. Line endings follow the file's (CRLF stays CRLF). Throws a UserError when the text is
 * not YAML Grove can edit; the caller validates the result against the schema.
 */
export function appendDecisionToSpecText(text: string, decision: SpecDecision): string {
  const doc = parseSpecYaml(text);
  if (doc.errors.length > 0) {
    throw new UserError(`the spec is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  }
  const before = specData(doc);
  if (before === null || typeof before !== 'object' || Array.isArray(before)) {
    throw new UserError('the spec is not a YAML mapping, so no decision can be added to it');
  }
  const record = before as Record<string, unknown>;
  const expected = {
    ...record,
    decisions: [
      ...(Array.isArray(record['decisions']) ? record['decisions'] : []),
      {
        date: decision.date,
        choice: decision.choice,
        rationale: rationaleValue(decision.rationale),
      },
    ],
  };
  const crlf = text.includes('\r\n');
  const attempts: (() => string | undefined)[] = [true, false].map((styled) => () => {
    const where = splice(doc, text, (column) => indent(entryText(decision, styled), column));
    if (!where) return undefined;
    const insert = crlf ? where.insert.replace(/\r?\n/g, '\r\n') : where.insert;
    return `${text.slice(0, where.start)}${insert}${text.slice(where.end)}`;
  });
  attempts.push(() => documentEdit(doc, decision));
  for (const attempt of attempts) {
    const edited = attempt();
    if (edited === undefined) continue;
    const after = parseSpecYaml(edited);
    if (after.errors.length === 0 && isDeepStrictEqual(specData(after), expected)) return edited;
  }
  throw new UserError(
    'Grove could not add the decision without changing the rest of the spec ' +
      '(its `decisions` is not a list of entries?)',
  );
}

// ---- off the event loop ------------------------------------------------------------------------

/**
 * The spec with the decision and its schema check: the text to write, or why not (`edit`: the
 * entry cannot go in; `validate`: the result would not validate, its errors formatted).
 */
export type SpecEditOutcome =
  { ok: true; text: string } | { ok: false; stage: 'edit' | 'validate'; message: string };

/** Adds the decision and validates the result (synchronous: a worker job, or a small spec). */
export function editAndValidateSpec(
  specPath: string,
  text: string,
  decision: SpecDecision,
): SpecEditOutcome {
  let edited: string;
  try {
    edited = appendDecisionToSpecText(text, decision);
  } catch (error) {
    return { ok: false, stage: 'edit', message: (error as Error).message };
  }
  const validated = validateSpecText(specPath, edited);
  if (validated.ok) return { ok: true, text: edited };
  return {
    ok: false,
    stage: 'validate',
    message: validated.errors.map(formatSpecError).join('; '),
  };
}

/**
 * editAndValidateSpec where it does not hold the event loop: a spec over MAIN_THREAD_SPEC_BYTES
 * (its two YAML parses take seconds for a few MiB) on a worker thread (job kind
 * `decision-spec-edit`, main/worktree/pool-worker.ts) with the spec parse's deadline; on the
 * main thread, after a slice, where worker threads cannot start (the CLI run from sources).
 */
export async function editAndValidateSpecOffTheLoop(
  specPath: string,
  text: string,
  decision: SpecDecision,
): Promise<SpecEditOutcome> {
  const entry = { date: decision.date, choice: decision.choice, rationale: decision.rationale };
  if (text.length <= MAIN_THREAD_SPEC_BYTES) return editAndValidateSpec(specPath, text, entry);
  try {
    return await workerPool().run<SpecEditOutcome>(
      'decision-spec-edit',
      { specPath, text, decision: entry },
      { deadlineMs: SPEC_PARSE_DEADLINE_MS },
    );
  } catch (error) {
    if (error instanceof WorkersUnavailableError) {
      await nextSlice();
      return editAndValidateSpec(specPath, text, entry);
    }
    if (error instanceof UserError && error.code === 'timed-out') {
      throw new UserError(
        `adding the decision to ${specPath} took longer than ${SPEC_PARSE_DEADLINE_MS / 1000} s ` +
          `(it is ${Math.round(text.length / 1024)} KiB; the machine may be busy); nothing was ` +
          'written',
        { code: 'timed-out' },
      );
    }
    throw error;
  }
}
