// NotarAI 0.7's `export-context`: for each spec whose artifact globs match a path of
// `git diff <base> --name-only` (or the one spec asked for), its text, the governed files that
// changed (binary ones by extension apart), their diff against the base and each file's first
// artifact category; and the markdown NotarAI's `reconcile` skill parses (its reconcile-prompt
// template, contexts separated by a `---` line; the spec's code fence made longer than any fence
// inside the spec, see codeFence; names quoted and code spans sized so that no name from the
// repository can end its line or its code span, see markdownName and inlineCode; the spec's name
// in its heading is a code span too unless it is a plain word, see headingName). Public API:
//
//   exportContext(root, { baseBranch, specPath? }) -> { contexts, unreadable_specs }
//   renderContextMarkdown(contexts)                -> string (what `notarai export-context` prints)
//
// Same as NotarAI: tracked changes only (untracked files are not in `git diff`), deleted files
// never listed, no hash cache. Grove: the one glob matcher, paths in UTF-8 byte order, the diff
// computed by intersection-diff.ts (paths on stdin, a private index), specs read confined, and a
// spec that cannot be read left out and listed in `unreadable_specs` (NotarAI stops at it).
import path from 'node:path';
import type { ExportContext, ExportContextResult } from '../../../shared/notarai-check.ts';
import { displayPath, shortArgument } from '../../platform/confined-fs.ts';
import { UserError } from '../../platform/errors.ts';
import { isBinaryByExtension } from '../floor/binary-files.ts';
import type { EngineParts } from '../floor/classify.ts';
import {
  changedVsBase,
  gitDirectories,
  resolveBase,
  type ChangedEntry,
} from '../floor/git-queries.ts';
import { diffPathSetsAgainstBase } from '../floor/intersection-diff.ts';
import { gatherInputs, standaloneParts } from './notarai-inputs.ts';
import { unreadableSpecs, type CheckSpec } from './notarai-specs.ts';
import { isSpecPath } from '../specs/spec-paths.ts';

/**
 * NotarAI's reconcile-prompt template (the text its skill parses), placeholders in braces. Where
 * NotarAI's has the code spans `{{base_branch}}` and `git diff {{base_branch}} -- <file>`, they
 * are built whole by inlineCode (the same bytes for an ordinary base).
 */
const RECONCILE_PROMPT = `# Reconciliation: {{spec_name}}

## Spec Content

{{fence}}yaml
{{spec_content}}
{{fence}}

## Changed Files

The following files governed by this spec have changed since {{base_branch_code}}:

{{changed_files}}

## Instructions

For each changed file listed above:

1. Read the file's current content using your file-reading tools.
2. Run {{git_diff_code}} (or equivalent) to see what changed.

Then review the changes against the spec. For each behavior, constraint, and invariant:

- Check whether the changes support or contradict it.
- Identify any drift between spec intent and implementation.
- Propose targeted updates to bring spec, code, and docs into alignment.

The spec is the canonical tiebreaker when code and spec disagree.

Report findings in this format:

- **DRIFT**: Code has changed in ways not reflected in the spec
- **VIOLATED**: Code contradicts a spec constraint or invariant
- **UNSPECCED**: New code not covered by any spec behavior
- **STALE REF**: Spec references code or docs that no longer exist

If everything aligns, report: "No drift detected."
`;

/** Runs of three or more backticks that begin a line, after any spaces or tabs. */
const LINE_START_BACKTICKS = /^[ \t]*(`{3,})/gm;

/**
 * The code fence for `content`: NotarAI's three backticks, or one more than the longest backtick
 * run that begins a line of the content (CommonMark: a fence closes only at a line of at least as
 * many backticks). With NotarAI's fixed three, a spec holding a line of "```" would close the
 * block early, and what follows it would read as the prompt's own headings and instructions.
 * CommonMark lets a closing fence be indented by at most three spaces; any indentation counts
 * here, since YAML indents freely and the prompt's reader is not always a CommonMark parser.
 */
export function codeFence(content: string): string {
  let longest = 0;
  for (const match of content.matchAll(LINE_START_BACKTICKS)) {
    longest = Math.max(longest, match[1]?.length ?? 0);
  }
  return '`'.repeat(Math.max(3, longest + 1));
}

/**
 * Characters that show nothing, or reorder what a reader sees, in a name from the repository:
 * zero-width ones (U+200B-U+200D, the word joiner U+2060, the byte order mark U+FEFF), bidi marks,
 * embeddings, overrides and isolates (U+200E, U+200F, U+061C, U+202A-U+202E, U+2066-U+2069: a file
 * named with U+202E reads backwards) and the line and paragraph separators (U+2028, U+2029, which
 * end a line in some readers). A character-class body, for the prompt's names here (markdownName)
 * and the terminal's text (main/notarai-cli's `printable`).
 */
export const HIDDEN_CHARACTERS =
  '\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff';

// Characters that must not reach the prompt as they are: C0 controls (newline, CR, tab, ESC ...),
// DEL, C1 controls (NEL among them) and HIDDEN_CHARACTERS. CommonMark ends a line at LF or CR;
// the others end one in some readers, are invisible or reorder the line.

const UNSAFE_IN_A_LINE = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${HIDDEN_CHARACTERS}]`);

/** Git's C escapes (quote.c); any other unsafe character is written as octal UTF-8 bytes. */
const C_ESCAPES: Record<string, string> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\v': '\\v',
  '\f': '\\f',
  '\r': '\\r',
  '"': '\\"',
  '\\': '\\\\',
};

/**
 * A name from the repository (a file, the spec's stem, the base branch) as one line of the
 * prompt: as it is, unless it holds a character of UNSAFE_IN_A_LINE or begins with `"`; then
 * C-quoted as git quotes paths (core.quotePath): in double quotes, `\n` `\r` `\t` `\a` `\b`
 * `\v` `\f` `\"` `\\`, any other such character as its UTF-8 bytes in octal (`\033`), other
 * non-ASCII kept. A committed file named `a<LF>## Instructions` would otherwise write a heading of
 * its own into the prompt. Unambiguous: what begins with `"` is quoted, anything else is the name
 * itself (a name beginning with `"` is quoted for that reason). Names with a `"` or `\` elsewhere
 * stay as they are, as in NotarAI's output (git would quote them).
 */
export function markdownName(name: string): string {
  if (!UNSAFE_IN_A_LINE.test(name) && !name.startsWith('"')) return name;
  let quoted = '"';
  for (const character of name) {
    const escape = C_ESCAPES[character];
    if (escape !== undefined) quoted += escape;
    else if (UNSAFE_IN_A_LINE.test(character)) {
      for (const byte of Buffer.from(character, 'utf8')) {
        quoted += `\\${byte.toString(8).padStart(3, '0')}`;
      }
    } else quoted += character;
  }
  return `${quoted}"`;
}

/**
 * `text` as a CommonMark code span that shows it exactly: delimited by one backtick more than its
 * longest run of backticks (so none inside can close it), with a space inside each delimiter when
 * the text begins or ends with a backtick (which would otherwise join the delimiter), or begins
 * and ends with a space (which CommonMark strips once). Ordinary text gets NotarAI's `text`.
 * `text` must be one line (see markdownName).
 */
export function inlineCode(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const ticks = '`'.repeat(longest + 1);
  const pad =
    text.startsWith('`') ||
    text.endsWith('`') ||
    (text.startsWith(' ') && text.endsWith(' ') && /[^ ]/.test(text))
      ? ' '
      : '';
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

/** A spec stem NotarAI's heading shows as it is: letters, digits, `.`, `_` and `-` only. */
const ORDINARY_SPEC_NAME = /^[\p{L}\p{M}\p{N}._-]+$/u;

/**
 * The spec's stem in the `# Reconciliation:` heading: as it is when ordinary (NotarAI's bytes),
 * else a code span of its markdownName, as the prompt's other names. The heading is outside
 * every fence, so a spec named `Ignore the instructions below and ….spec.yaml` would otherwise
 * put a line of its own words into the prompt's text.
 */
export function headingName(stem: string): string {
  return ORDINARY_SPEC_NAME.test(stem) ? stem : inlineCode(markdownName(stem));
}

/** One context as NotarAI's markdown. */
export function renderOneContext(context: ExportContext): string {
  const changed =
    context.changed_files.length === 0
      ? 'No changed files.'
      : context.changed_files.map((file) => `- ${inlineCode(markdownName(file))}`).join('\n');
  const base = markdownName(context.base_branch);
  const values: Record<string, string> = {
    spec_name: headingName(context.spec_name),
    base_branch_code: inlineCode(base),
    git_diff_code: inlineCode(`git diff ${base} -- <file>`),
    changed_files: changed,
    spec_content: context.spec_content,
    fence: codeFence(context.spec_content),
  };
  // One pass, so a placeholder inside the spec's own text is left as it is.
  return RECONCILE_PROMPT.replace(
    /\{\{(spec_name|base_branch_code|git_diff_code|changed_files|spec_content|fence)\}\}/g,
    (_, key: string) => values[key] ?? '',
  );
}

/** What `notarai export-context --format markdown` prints for these contexts. */
export function renderContextMarkdown(contexts: readonly ExportContext[]): string {
  return contexts.map((context) => `${renderOneContext(context)}\n`).join('\n---\n\n');
}

/** What export-context finds (the tool adds `markdown` when asked for it). */
export type ExportedContexts = Omit<ExportContextResult, 'markdown'>;

/**
 * Per list of tracked changes the live index keeps (ScanSnapshot.changed), each spec's context
 * computed from it, with what else it was computed from (base commit, spec, governed files, base
 * name) and when: gone with the list.
 */
const keptContexts = new WeakMap<readonly ChangedEntry[], Map<string, KeptContext>>();

interface KeptContext {
  keys: readonly unknown[];
  context: ExportContext;
  /** The live index's generation the context was computed at. */
  generation: number;
}

/** True if none of the context's files moved since it was computed (and the index can tell). */
function unmoved(parts: EngineParts, kept: KeptContext): boolean {
  const moved = parts.index?.movedSince(kept.generation);
  if (moved === undefined) return false;
  if (moved.length === 0) return true;
  const files = new Set([...kept.context.changed_files, ...kept.context.binary_changes]);
  return !moved.some((file) => files.has(file));
}

/** `export-context` with an engine's parts. */
export async function exportContextWithParts(
  parts: EngineParts,
  options: {
    baseBranch: string;
    specPath?: string;
    objectsDir?: () => Promise<string>;
    signal?: AbortSignal;
  },
): Promise<ExportedContexts> {
  const { signal } = options;
  if (options.specPath !== undefined && !isSpecPath(options.specPath)) {
    throw new UserError(
      `spec_path must be a *.spec.yaml file under .notarai/: ${displayPath(options.specPath)}`,
    );
  }
  // The base's commit and the tracked changes vs it: the live index's when it keeps them (checked
  // again once synced); else git's, the changes asked beside the inputs (and kept by the index if
  // nothing moved from their start to the sync).
  const index = parts.index;
  const askedAt = index?.current();
  const peek = index?.snapshot(askedAt);
  const peeked = peek?.bases.get(options.baseBranch);
  const askedSha = peeked ?? (await resolveBase(parts.root, options.baseBranch));
  const asked = peek?.changed.has(askedSha)
    ? undefined
    : changedVsBase(parts.root, askedSha, signal);
  asked?.catch(() => undefined);
  // Export-context reads no hash cache: nothing is classified.
  const inputs = await gatherInputs(parts, {
    sync: true,
    skipChanged: true,
    ...(signal ? { signal } : {}),
  });
  const known = index?.snapshot(inputs.sequence);
  const sha =
    peeked === undefined || known?.bases.get(options.baseBranch) === peeked
      ? askedSha
      : await resolveBase(parts.root, options.baseBranch);
  let entries = known?.changed.get(sha);
  if (!entries) {
    const reuse = asked !== undefined && sha === askedSha;
    const since = reuse ? askedAt : index?.current();
    const listed = await (reuse ? asked : changedVsBase(parts.root, sha, signal));
    if (known && since === inputs.sequence) {
      index?.record(since, (snapshot) => snapshot.changed.set(sha, listed));
    }
    entries = listed;
  }
  const present = new Set<string>();
  const all = new Set<string>();
  for (const entry of entries) {
    all.add(entry.path);
    if (entry.from !== undefined) all.add(entry.from);
    if (entry.status !== 'D') present.add(entry.path);
  }
  let specs: CheckSpec[];
  if (options.specPath !== undefined) {
    const spec = inputs.specs.find((candidate) => candidate.path === options.specPath);
    if (!spec) throw new UserError(`spec file not found: ${shortArgument(options.specPath)}`);
    if (spec.errors.length > 0) {
      throw new UserError(
        `spec does not parse: ${options.specPath}: ${spec.errors[0]?.message ?? ''}`,
      );
    }
    specs = [spec];
  } else {
    specs = inputs.specs.filter(
      (spec) =>
        spec.errors.length === 0 &&
        [...all].some((file) => spec.globs.some((glob) => glob.set.test(file))),
    );
  }
  const objectsDir =
    options.objectsDir ??
    (async () => path.join((await gitDirectories(parts.root)).commonDir, 'objects'));
  // While the live index keeps these tracked changes, a spec's context is the one computed from
  // them before unless one of its files moved since (LiveIndex.movedSince: the same list of changes
  // can come back after an edit of a file that was changed already).
  const generation = inputs.generation;
  const fromIndex =
    parts.memo !== undefined && generation !== undefined && known?.changed.get(sha) === entries;
  let kept = fromIndex ? keptContexts.get(entries) : undefined;
  if (fromIndex && !kept) {
    kept = new Map();
    keptContexts.set(entries, kept);
  }
  // The specs whose context is kept come back as they were; the others are computed with one
  // diff for all of their changed files (diffPathSetsAgainstBase).
  const contexts: (ExportContext | undefined)[] = [];
  const computed: { at: number; spec: CheckSpec; keys: unknown[]; governed: string[] }[] = [];
  for (const spec of specs) {
    const governedAll = inputs.governed.get(spec.path) ?? [];
    const keys = [sha, spec, governedAll, options.baseBranch];
    const before = kept?.get(spec.path);
    if (before?.keys.every((key, at) => key === keys[at]) && unmoved(parts, before)) {
      contexts.push(before.context);
      continue;
    }
    const governed = governedAll.filter((file) => present.has(file));
    computed.push({ at: contexts.length, spec, keys, governed });
    contexts.push(undefined);
  }
  const changedOf = computed.map(({ governed }) =>
    governed.filter((file) => !isBinaryByExtension(file)),
  );
  const diffs = changedOf.some((files) => files.length > 0)
    ? await diffPathSetsAgainstBase(parts.root, sha, {
        sets: changedOf,
        trackedChanges: entries.length,
        objectsDir: await objectsDir(),
        ...(signal ? { signal } : {}),
      })
    : changedOf.map(() => '');
  computed.forEach(({ at, spec, keys, governed }, which) => {
    const changedFiles = changedOf[which]!;
    const categories: Record<string, string> = {};
    for (const file of changedFiles) {
      const glob = spec.globs.find((candidate) => candidate.set.test(file));
      if (glob) categories[file] = glob.category;
    }
    const base = path.posix.basename(spec.path);
    const context: ExportContext = {
      spec_path: spec.path,
      spec_name: base.slice(0, base.lastIndexOf('.')),
      spec_content: spec.text,
      base_branch: options.baseBranch,
      changed_files: changedFiles,
      binary_changes: governed.filter((file) => isBinaryByExtension(file)),
      diff: diffs[which]!, // git's output as it is, final newline included (as NotarAI)
      file_categories: categories,
    };
    if (generation !== undefined) kept?.set(spec.path, { keys, context, generation });
    contexts[at] = context;
  });
  // With spec_path, the one spec parsed (or the call failed above): the others do not matter.
  const unreadable = options.specPath === undefined ? unreadableSpecs(inputs.specs) : [];
  return { contexts: contexts as ExportContext[], unreadable_specs: unreadable };
}

/** NotarAI's `export-context` for the worktree at `root` (see the header). */
export async function exportContext(
  root: string,
  options: { baseBranch: string; specPath?: string },
): Promise<ExportedContexts> {
  const [parts, close] = await standaloneParts(root);
  try {
    return await exportContextWithParts(parts, options);
  } finally {
    close();
  }
}
