// `grove check`, `grove score` and `grove export-context`: NotarAI 0.7's CLI commands of the same
// names, with its flags, output and exit codes, so NotarAI's own skills and CI jobs work with
// `grove` in place of `notarai` — run in a worktree with no host and no window. The work is the
// engine's (main/reconcile/notarai07/notarai-check.ts, notarai-export.ts); this module parses the command
// line and prints. Grove adds `grove check --format sarif` (check-sarif.ts) and an optional
// worktree path (NotarAI always uses the current directory). Differences on purpose:
// docs/notarai-compatibility.md.
import { parseArgs } from 'node:util';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type {
  CheckFinding,
  CheckReport,
  DriftReport,
  ExportContext,
  UnreadableSpec,
} from '../../shared/notarai-check.ts';
import { statInsideRoot } from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';
import { runCheck } from '../reconcile/notarai07/notarai-check.ts';
import { scoreSpecs } from '../reconcile/notarai07/notarai-score.ts';
import {
  exportContext,
  HIDDEN_CHARACTERS,
  renderContextMarkdown,
} from '../reconcile/notarai07/notarai-export.ts';
import { discoverSpecPaths } from '../reconcile/specs/spec-paths.ts';
import { gitDirectories } from '../reconcile/floor/git-queries.ts';
import { BOOTSTRAP_PROMPT } from '../tools/reconcile-mcp.ts';
import { CHECK_OPTIONS, EXPORT_OPTIONS, SCORE_OPTIONS } from './command-options.ts';
import { Float, notaraiJson } from './notarai-json.ts';

export const NOTARAI_COMMANDS = ['check', 'score', 'export-context'] as const;
export type NotaraiCommand = (typeof NOTARAI_COMMANDS)[number];

export const NOTARAI_USAGE = `Usage: grove check [--format human|json|sarif] [--strict] [--with-snapshot] [<worktree-path>]
       grove score [--format human|json] [--spec <spec-path>] [--with-snapshot] [<worktree-path>]
       grove export-context (--all | --spec <spec-path> | --bootstrap) [--base-branch B]
                            [--format markdown|json] [<worktree-path>]

NotarAI 0.7's check, score and export-context, on the worktree at <worktree-path> (default: the
current directory, which must hold .notarai/). No Grove host or window is needed.

  check           coverage gaps, orphaned globs, changed files, overlaps, $ref cycles, behaviors,
                  tests and lint L001-L011, filtered by .notarai/check.yaml.
                  Exit 0: passed; 1: failing findings (errors, or fail_on's tier; with --strict,
                  any finding); 2: no .notarai/. --format sarif writes SARIF 2.1.0 for code scanning.
  score           each spec's drift score (healthy / review / overdue). Exit 0; 1 when a spec
                  cannot be read (named on stderr; the others are scored), as check fails on it.
  export-context  the reconciliation context of the specs the branch's changes affect (--all) or
                  of one spec, as NotarAI's reconcile prompt (markdown) or JSON.

  --with-snapshot check and score count as reconciled what the committed snapshot
                  (.notarai/reconciliation_state.json) fingerprinted, for files this machine's
                  hash cache has no row for (Grove's rule, as its window counts): a fresh clone in
                  CI sees the team's reconciled state. Without it: NotarAI's rule, the cache alone.`;

/** Where a command writes; the process's streams unless a test passes its own. */
export interface CommandOutput {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stdout is a terminal (colours, as `ls` does; NO_COLOR turns them off). */
  colours: boolean;
}

export const processOutput = (): CommandOutput => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  colours: process.stdout.isTTY === true && !process.env.NO_COLOR,
});

function usageError(message: string): UserError {
  return new UserError(message, { code: 'invalid-argument', cause: 'usage' });
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw usageError(`${flag} must be one of ${allowed.join(', ')}, got ${value}`);
}

function worktreeOf(positionals: string[]): string {
  if (positionals.length > 1)
    throw usageError(`expected one worktree path, got ${positionals.length}`);
  return path.resolve(positionals[0] ?? '.');
}

/** NotarAI's exit 2: the worktree has no `.notarai/` directory. */
export async function hasNotaraiDir(root: string): Promise<boolean> {
  try {
    const { stats } = await statInsideRoot(root, '.notarai');
    return stats.isDirectory();
  } catch {
    return false;
  }
}

// C0 controls, DEL, C1 controls and the characters that show nothing or reorder a line.

const CONTROL = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${HIDDEN_CHARACTERS}]`, 'g');

const CONTROL_BUT_NEWLINE = new RegExp(
  `[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f${HIDDEN_CHARACTERS}]`,
  'g',
);

/**
 * Text from the worktree (paths, spec names and keys, messages quoting them) as the terminal shows
 * it: control characters (C0, DEL, C1) and HIDDEN_CHARACTERS (bidi embeddings, overrides,
 * isolates and marks, zero-width characters, U+2028/U+2029) written as \u escapes. A committed
 * file named `\x1b]52;c;...\x07` or a behavior name with `\r` would otherwise set the clipboard
 * or the title, or overwrite the line before it ("All checks passed.") in human output and
 * warnings; a U+202E would show the rest of a path backwards, a zero-width space make two paths
 * look the same.
 */
export function printable(text: string, { newlines = false } = {}): string {
  return text.replace(
    newlines ? CONTROL_BUT_NEWLINE : CONTROL,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export const NO_NOTARAI = 'Error: .notarai/ directory not found. Run `notarai init` first.\n';

/**
 * Score's and export-context's word on the specs they left out, one warning per error (check
 * reports the same specs as `spec_invalid` findings). NotarAI stops the command at the first.
 */
function warnUnreadable(specs: readonly UnreadableSpec[], out: CommandOutput): void {
  for (const spec of specs) {
    const where = `${spec.spec_path}${spec.line ? `:${spec.line}` : ''}`;
    out.stderr(
      `warning: ${printable(`${where}: spec does not parse, left out: ${spec.message}`)}\n`,
    );
  }
}

const specCount = (specs: readonly UnreadableSpec[]) =>
  new Set(specs.map((spec) => spec.spec_path)).size;

// ---- check -------------------------------------------------------------------------------------

const COLOUR = { red: '\x1b[31m', yellow: '\x1b[33m', cyan: '\x1b[36m', green: '\x1b[32m' };
const RESET = '\x1b[0m';

/** Human output's groups inside a tier, in NotarAI's order, with Grove's two types added. */
const HUMAN_GROUPS: [CheckFinding['type'], string][] = [
  ['spec_invalid', 'Invalid Specs'],
  ['circular_ref', 'Circular $ref Cycles'],
  ['ref_outside_worktree', '$ref Outside the Worktree'],
  ['orphaned_glob', 'Orphaned Globs'],
  ['changed_since_reconciliation', 'Changed Since Last Reconciliation'],
  ['coverage_gap', 'Coverage Gaps'],
  ['overlapping_coverage', 'Overlapping Coverage'],
  ['behavior_incomplete', 'Incomplete Behaviors'],
  ['test_path_missing', 'Test Paths Missing'],
  ['test_coverage_missing', 'Test Coverage Missing'],
];
/** Types whose message says more than the path (NotarAI prints it under the path). */
const MESSAGE_SHOWN = new Set<CheckFinding['type']>([
  'spec_invalid',
  'circular_ref',
  'ref_outside_worktree',
  'behavior_incomplete',
  'test_coverage_missing',
]);

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** NotarAI's human check output (plus Grove's spec lines, and L011, which NotarAI never shows). */
export function formatCheckHuman(report: CheckReport, colours: boolean): string {
  const paint = (colour: string, text: string) => (colours ? `${colour}${text}${RESET}` : text);
  if (report.findings.length === 0) return 'All checks passed.\n';
  const lines: string[] = [];
  const prefix = (finding: CheckFinding) =>
    finding.severity === 'error'
      ? paint(COLOUR.red, '    error  ')
      : paint(COLOUR.yellow, '    warning');
  const tiers: [CheckFinding['tier'], string, string][] = [
    ['critical', 'Critical', COLOUR.red],
    ['drift', 'Drift', COLOUR.yellow],
    ['housekeeping', 'Housekeeping', COLOUR.cyan],
  ];
  for (const [tier, label, colour] of tiers) {
    const inTier = report.findings.filter((finding) => finding.tier === tier);
    if (inTier.length === 0) continue;
    lines.push(paint(colour, `--- ${label} (${inTier.length} findings) ---`));
    for (const [type, groupLabel] of HUMAN_GROUPS) {
      const group = inTier.filter((finding) => finding.type === type);
      if (group.length === 0) continue;
      lines.push(`  ${groupLabel} (${group.length} findings)`);
      for (const finding of group) {
        const detail =
          finding.file_path ?? finding.glob_pattern ?? finding.spec_path ?? '(unknown)';
        lines.push(`${prefix(finding)}: ${printable(detail)}`);
        if (type !== 'circular_ref' && finding.spec_path !== null && finding.spec_path !== detail) {
          lines.push(
            `            in ${printable(finding.spec_path)}${finding.line ? `:${finding.line}` : ''}`,
          );
        }
        if (MESSAGE_SHOWN.has(type)) lines.push(`            ${printable(finding.message)}`);
      }
    }
    const lint = inTier.filter((finding) => finding.type.startsWith('lint_'));
    if (lint.length > 0) {
      lines.push(`  Lint Violations (${lint.length} findings)`);
      for (const finding of lint) {
        const rule = finding.type.slice('lint_'.length).toUpperCase();
        const where = finding.spec_path
          ? ` (${printable(finding.spec_path)}${finding.line ? `:${finding.line}` : ''})`
          : '';
        lines.push(`${prefix(finding)} [${rule}]: ${printable(finding.message)}${where}`);
      }
    }
    lines.push('');
  }
  const { errors, warnings } = report.summary;
  lines.push(
    `${plural(errors + warnings, 'issue')} found (${plural(errors, 'error')}, ${plural(warnings, 'warning')}).`,
  );
  return `${lines.join('\n')}\n`;
}

/** NotarAI's `check --format json`: its seven keys per finding and the summary, nothing else. */
export function formatCheckJson(report: CheckReport): string {
  return `${notaraiJson({
    findings: report.findings.map((finding) => ({
      type: finding.type,
      severity: finding.severity,
      tier: finding.tier,
      spec_path: finding.spec_path,
      file_path: finding.file_path,
      glob_pattern: finding.glob_pattern,
      message: finding.message,
    })),
    summary: { errors: report.summary.errors, warnings: report.summary.warnings },
  })}\n`;
}

async function checkCommand(args: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: CHECK_OPTIONS,
  });
  const format = oneOf('--format', values.format, ['human', 'json', 'sarif'] as const);
  const root = worktreeOf(positionals);
  if (!(await hasNotaraiDir(root))) {
    out.stderr(NO_NOTARAI);
    return 2;
  }
  const report = await runCheck(root, {
    strict: values.strict,
    withSnapshot: values['with-snapshot'],
  });
  for (const warning of report.warnings) out.stderr(`warning: ${printable(warning)}\n`);
  if (format === 'json') out.stdout(formatCheckJson(report));
  else if (format === 'sarif') {
    // Loaded for this format alone: it brings zlib (~3 ms of every other run's start).
    const { cutNote, sarifText } = await import('./check-sarif.ts');
    const rootUri = pathToFileURL(`${root}${path.sep}`).href;
    const { text, cut } = sarifText(report, rootUri);
    if (cut.omitted > 0) out.stderr(`warning: ${cutNote(cut)}\n`);
    out.stdout(text);
  } else out.stdout(formatCheckHuman(report, out.colours));
  return report.exit_code;
}

// ---- score -------------------------------------------------------------------------------------

/** NotarAI's human score table (and a line on the specs that could not be read, if any). */
export function formatScoreHuman(report: DriftReport, colours: boolean): string {
  const unreadable = specCount(report.unreadable_specs);
  if (report.specs.length === 0) {
    // NotarAI's line is for a worktree without specs, not one whose specs all fail to load.
    return unreadable === 0
      ? 'No specs found.\n'
      : `No specs could be scored: ${plural(unreadable, 'spec')} could not be read.\n`;
  }
  const paint = (status: string) => {
    const colour = { healthy: COLOUR.green, review: COLOUR.yellow, overdue: COLOUR.red }[status];
    return colours && colour ? `${colour}${status}${RESET}` : status;
  };
  const lines = [`${'Spec'.padEnd(45)} ${'Score'.padEnd(7)} Status`, '-'.repeat(65)];
  for (const spec of report.specs) {
    lines.push(
      `${printable(spec.spec_path).padEnd(45)} ${spec.score.toFixed(2).padEnd(7)} ${paint(spec.status)}`,
    );
  }
  lines.push('', `Overall: ${report.overall.score.toFixed(2)} (${paint(report.overall.status)})`);
  if (unreadable > 0) lines.push(`Not scored: ${plural(unreadable, 'spec')} could not be read.`);
  return `${lines.join('\n')}\n`;
}

/**
 * NotarAI's `score --format json` (Grove's terms are in the MCP tool, not here). Where specs exist
 * and none could be read, the overall score and status are null: NotarAI prints no JSON then (it
 * stops at the first such spec), and the mean of no scores, 0.00 "healthy", would pass a job that
 * reads the status.
 */
export function formatScoreJson(report: DriftReport): string {
  const unscored = report.specs.length === 0 && report.unreadable_specs.length > 0;
  return `${notaraiJson({
    specs: report.specs.map((spec) => ({
      spec_path: spec.spec_path,
      score: new Float(spec.score),
      status: spec.status,
    })),
    overall: unscored
      ? { score: null, status: null }
      : { score: new Float(report.overall.score), status: report.overall.status },
  })}\n`;
}

async function scoreCommand(args: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: SCORE_OPTIONS,
  });
  const format = oneOf('--format', values.format, ['human', 'json'] as const);
  const root = worktreeOf(positionals);
  if (!(await hasNotaraiDir(root))) {
    out.stderr(NO_NOTARAI);
    return 2;
  }
  const report = await scoreSpecs(root, {
    withSnapshot: values['with-snapshot'],
    ...(values.spec === undefined ? {} : { specPath: values.spec }),
  });
  for (const warning of report.warnings) out.stderr(`warning: ${printable(warning)}\n`);
  warnUnreadable(report.unreadable_specs, out);
  out.stdout(format === 'json' ? formatScoreJson(report) : formatScoreHuman(report, out.colours));
  // Informational, as NotarAI's, except that a spec that cannot be read fails the run: NotarAI
  // exits 1 on it (and scores nothing), and `grove check` fails on it (spec_invalid is a critical
  // error), so a CI job gating on score cannot pass on a broken spec. With --spec, only that
  // spec is read (an unreadable one is an error above).
  return report.unreadable_specs.length > 0 ? 1 : 0;
}

// ---- export-context ----------------------------------------------------------------------------

/** One context as NotarAI's `render_json` writes it. */
const contextJson = (context: ExportContext) => ({ ...context });

async function exportContextCommand(args: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: EXPORT_OPTIONS,
  });
  const format = oneOf('--format', values.format, ['markdown', 'json'] as const);
  const root = worktreeOf(positionals);
  if (values.bootstrap) {
    // Grove's own bootstrap prompt (the MCP prompt `bootstrap_specs`), NotarAI's flag; as
    // NotarAI, a warning when specs exist already (bootstrapping would write them again).
    if ((await discoverSpecPaths(root)).length > 0) {
      out.stderr(
        'Warning: .notarai/ already contains spec files; bootstrapping may duplicate them.\n',
      );
    }
    out.stdout(`${BOOTSTRAP_PROMPT}\n`);
    return 0;
  }
  if (!(await hasNotaraiDir(root))) {
    out.stderr('Error: .notarai/ not found. Run `notarai init` first.\n');
    return 2;
  }
  if ((values.spec !== undefined) === values.all) {
    out.stderr('Error: specify exactly one of --spec <path>, --all, or --bootstrap.\n');
    return 1;
  }
  try {
    await gitDirectories(root);
  } catch {
    out.stderr(`Error: ${root} is not a git repository (export-context diffs against a branch).\n`);
    return 1;
  }
  const { contexts, unreadable_specs } = await exportContext(root, {
    baseBranch: values['base-branch'],
    ...(values.spec === undefined ? {} : { specPath: values.spec }),
  });
  warnUnreadable(unreadable_specs, out);
  if (format === 'json') {
    const items = contexts.map(contextJson);
    out.stdout(`${notaraiJson(items.length === 1 ? items[0]! : items)}\n`);
  } else out.stdout(renderContextMarkdown(contexts));
  return 0;
}

const COMMANDS: Record<NotaraiCommand, (args: string[], out: CommandOutput) => Promise<number>> = {
  check: checkCommand,
  score: scoreCommand,
  'export-context': exportContextCommand,
};

/**
 * Runs one of the three commands and returns its exit code. A usage error prints the usage and
 * returns 2 (as NotarAI's argument parser does); any other error prints `Error: <message>` and
 * returns 1.
 */
export async function runNotaraiCommand(
  command: NotaraiCommand,
  args: string[],
  out: CommandOutput = processOutput(),
): Promise<number> {
  return runWithUsage(NOTARAI_USAGE, args, out, () => COMMANDS[command](args, out));
}

/**
 * `--help` prints `usage`; otherwise runs `run`: a usage error prints the usage and returns 2 (as
 * NotarAI's argument parser does), any other error `Error: <message>` and returns 1. Shared by
 * every NotarAI command (check, score, export-context, decisions).
 */
export async function runWithUsage(
  usage: string,
  args: string[],
  out: CommandOutput,
  run: () => Promise<number>,
): Promise<number> {
  if (args.includes('-h') || args.includes('--help')) {
    out.stdout(`${usage}\n`);
    return 0;
  }
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const isUsage =
      (error instanceof UserError && error.cause === 'usage') ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    out.stderr(`Error: ${printable(message, { newlines: true })}\n`);
    if (isUsage) {
      out.stderr(`\n${usage}\n`);
      return 2;
    }
    return 1;
  }
}
