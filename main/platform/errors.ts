// The one user-facing error type. A UserError carries a message a person or a model can act on
// ("path escapes the worktree root with ..: ../x"), a code saying what kind of problem it is, and
// the cause when there is one. Every boundary treats it the same way: the MCP layer turns it into
// an `isError: true` result, the HostApi dispatcher into a refusal the window shows (HTTP 400 with
// the code under `grove serve`), the CLI into one line on stderr. Any other exception is reported
// too, but logged as unexpected. Messages name the problem and the path, never a file's content.

/** What kind of problem a UserError reports (stable: clients and tests may rely on them). */
export type UserErrorCode =
  /** An argument, command input or CLI option is wrong. */
  | 'invalid-argument'
  /** No such file, worktree, repository or command. */
  | 'not-found'
  /** Refused on purpose: outside the worktree, a symlink or special file, a system directory. */
  | 'refused'
  /** Over a size or count cap. */
  | 'too-large'
  /** Held by someone else: a port, a locked cache, a full worker pool. */
  | 'busy'
  /** The call's deadline passed. */
  | 'timed-out'
  /** Cancelled by the client or from the window. */
  | 'cancelled'
  /** What it needs is not running or not reachable (a stopped server, an LLM provider). */
  | 'unavailable';

export class UserError extends Error {
  override name = 'UserError';
  readonly code: UserErrorCode;

  constructor(message: string, options: { code?: UserErrorCode; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code ?? 'invalid-argument';
  }
}
