// `grove`'s usage text and the error for a command line it cannot run: shared by the dispatcher
// (cli.ts) and the serve command (serve-command.ts), and small, because `grove --help` loads it.
import { defaultDataDirectory } from '../host/data-directory.ts';
import { UserError } from '../platform/errors.ts';

export const USAGE = `Usage: grove serve [options] [<repo-path>...]
       grove bridge [--data-dir DIR] [--local] <worktree-path>
       grove check [--format human|json|sarif] [--strict] [<worktree-path>]
       grove score [--format human|json] [--spec <spec-path>] [<worktree-path>]
       grove export-context (--all | --spec <spec-path>) [--base-branch B] [--format markdown|json]
       grove decisions (list [--status S] | accept <spec> <index> | reject <spec> <index> [--reason R])

Runs one sandboxed MCP server per git worktree of each repository, and the Grove UI.
Without a path, serves the repositories opened before (kept in the data directory).

Options:
  --data-dir DIR   app database, settings and log (default: ${defaultDataDirectory()})
  --ui-port N      port of the UI (default: 47100; 0 picks a free one)
  --no-ui          do not serve the UI
  --just-tasks     offer list_just_tasks and run_just_task on every worktree served (they run the
                   worktree's just recipes with your rights; off by default)
  --json           print machine-readable JSON lines instead of text
  -h, --help       show this help
  -v, --version    print Grove's version`;

/** A command line Grove cannot run: the message, then the usage. */
export function usageError(message: string): UserError {
  return new UserError(message, { code: 'invalid-argument', cause: 'usage' });
}

/** Whether an error is about the command line (then the usage follows the message). */
export function isUsageError(error: unknown): boolean {
  return (
    (error instanceof UserError && error.cause === 'usage') ||
    ((error as { code?: unknown } | null)?.code?.toString().startsWith('ERR_PARSE_ARGS') ?? false)
  );
}

/** One `grove <command>`: its usage text and what it runs. */
export interface CliCommand {
  /** Printed for `grove <command> --help`, and after a usage error of the command. */
  usage: string;
  /**
   * Runs the command with the arguments after its name; resolves with the exit code, or -1 to
   * keep the process running (a server that stops on a signal). Throws a usage error (usage.ts)
   * for a command line it cannot run.
   */
  run(args: string[]): Promise<number>;
}
