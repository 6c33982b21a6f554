// The one user-facing error type. A ToolError carries a message a model or a user can act on
// ("path escapes the worktree root with ..: ../x"); the MCP layer turns it into an `isError: true`
// result, the host into the message the window shows. Any other exception is reported the same way
// but logged as unexpected. Messages name the problem and the path, never the content of a file.

export class ToolError extends Error {
  override name = 'ToolError';
}
