// `grove decisions list|accept|reject`: NotarAI 0.7's `notarai decisions`, with its arguments,
// output and exit codes, for the proposals in `.notarai/decision-log.json` — a person's side of
// the review (agents propose with the `propose_decision` tool and never accept). The work is
// main/reconcile/notarai07/decisions.ts; this module parses the command line and prints. Grove adds
// `--worktree DIR` (NotarAI always uses the current directory) and goes further where the files
// are concerned (validation before writing, atomic confined writes, comments kept, line breaks
// kept): docs/notarai-compatibility.md.
import { parseArgs } from 'node:util';
import path from 'node:path';
import type { Decision } from '../../shared/decisions.ts';
import { realWorktreeRoot } from '../platform/confined-fs.ts';
import { UserError } from '../platform/errors.ts';
import { acceptDecision, listDecisions, rejectDecision } from '../reconcile/notarai07/decisions.ts';
import {
  hasNotaraiDir,
  NO_NOTARAI,
  printable,
  processOutput,
  runWithUsage,
  type CommandOutput,
} from './notarai-commands.ts';

export const DECISIONS_USAGE = `Usage: grove decisions list [--status S] [--worktree DIR]
       grove decisions accept <spec> <index> [--worktree DIR]
       grove decisions reject <spec> <index> [--reason R] [--worktree DIR]

NotarAI 0.7's decisions: the proposals in .notarai/decision-log.json, written by a
reconciliation or by an agent (the propose_decision tool), which a person accepts or rejects.

  list     the proposals (all, or those with --status proposed|accepted|rejected) with their
           index: their position in the log.
  accept   adds the proposal's date, choice and rationale to <spec>'s decisions: and removes it
           from the log (the indexes after it shift down by one). The spec is checked first: if it
           would not validate, nothing is written.
  reject   marks the proposal rejected, with --reason.

  --worktree DIR   the worktree (default: the current directory, which must hold .notarai/)

Exit 0: done; 1: refused (another spec's proposal, no such index, not proposed, a spec that would
not validate, a log that cannot be read), nothing written; 2: no .notarai/, or a bad command line.`;

function usageError(message: string): UserError {
  return new UserError(message, { code: 'invalid-argument', cause: 'usage' });
}

/** `text` padded with spaces to `width` characters (Rust's `{:<width}`: code points, no cut). */
function padRight(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - [...text].length));
}

/**
 * NotarAI's choice column: past 40 bytes (UTF-8), the first 37 bytes and `...`. NotarAI cuts at
 * byte 37 and panics when that falls inside a character; Grove cuts before that character.
 */
export function choicePreview(choice: string): string {
  if (Buffer.byteLength(choice) <= 40) return choice;
  let bytes = 0;
  let cut = '';
  for (const character of choice) {
    bytes += Buffer.byteLength(character);
    if (bytes > 37) break;
    cut += character;
  }
  return `${cut}...`;
}

/** NotarAI's `decisions list` output for these decisions (already filtered). */
export function formatDecisionList(decisions: readonly Decision[], status?: string): string {
  if (decisions.length === 0) {
    const qualifier = status === undefined ? '' : ` with status '${printable(status)}'`;
    return `No decisions${qualifier} found.\n`;
  }
  const lines = [
    `${padRight('Index', 5)} ${padRight('Status', 10)} ${padRight('Spec', 40)} Choice`,
    '-'.repeat(80),
  ];
  for (const decision of decisions) {
    lines.push(
      `${padRight(String(decision.index), 5)} ${padRight(printable(decision.status), 10)} ` +
        `${padRight(printable(decision.spec_path), 40)} ${printable(choicePreview(decision.choice))}`,
    );
  }
  lines.push('', `${decisions.length} decision(s) shown.`);
  return `${lines.join('\n')}\n`;
}

/** `<index>`: a whole number, as NotarAI's usize argument. */
function indexArgument(value: string): number {
  const index = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(index)) {
    throw usageError(`<index> must be a whole number (see grove decisions list), got ${value}`);
  }
  return index;
}

function exactly(positionals: string[], names: string[]): string[] {
  if (positionals.length !== names.length) {
    throw usageError(
      `expected ${names.join(' ')}, got ${positionals.length} argument(s)` +
        (positionals.length > 0 ? `: ${positionals.join(' ')}` : ''),
    );
  }
  return positionals;
}

const SUBCOMMANDS = ['list', 'accept', 'reject'] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

async function run(args: string[], out: CommandOutput): Promise<number> {
  const [sub, ...rest] = args;
  if (!(SUBCOMMANDS as readonly (string | undefined)[]).includes(sub)) {
    throw usageError(
      sub === undefined ? 'expected list, accept or reject' : `unknown subcommand: ${sub}`,
    );
  }
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      worktree: { type: 'string' },
      ...(sub === 'list' ? { status: { type: 'string' as const } } : {}),
      ...(sub === 'reject' ? { reason: { type: 'string' as const } } : {}),
    },
  });
  const options = values as { worktree?: string; status?: string; reason?: string };
  const root = await realWorktreeRoot(path.resolve(options.worktree ?? '.'));
  if (!(await hasNotaraiDir(root))) {
    out.stderr(NO_NOTARAI);
    return 2;
  }
  switch (sub as Subcommand) {
    case 'list': {
      exactly(positionals, []);
      const { decisions } = await listDecisions(root, { status: options.status });
      out.stdout(formatDecisionList(decisions, options.status));
      return 0;
    }
    case 'accept': {
      const [spec, index] = exactly(positionals, ['<spec>', '<index>']);
      const accepted = await acceptDecision(root, spec!, indexArgument(index!));
      out.stdout(
        `Accepted decision for ${printable(accepted.spec_path)}: ${printable(accepted.choice)}\n`,
      );
      return 0;
    }
    case 'reject': {
      const [spec, index] = exactly(positionals, ['<spec>', '<index>']);
      const rejected = await rejectDecision(root, spec!, indexArgument(index!), options.reason);
      out.stdout(
        `Rejected decision for ${printable(rejected.spec_path)}: ${printable(rejected.choice)}\n`,
      );
      return 0;
    }
  }
}

/**
 * Runs `grove decisions <args>` and returns its exit code: a usage error prints the usage and
 * returns 2 (as NotarAI's argument parser does); any other error prints `Error: <message>` and
 * returns 1 (NotarAI's words where NotarAI refuses the same thing).
 */
export async function runDecisionsCommand(
  args: string[],
  out: CommandOutput = processOutput(),
): Promise<number> {
  return runWithUsage(DECISIONS_USAGE, args, out, () => run(args, out));
}
