// The host's data model as every side sees it: repos, worktrees and the status of each worktree's
// MCP server. Runtime schemas (zod) live here too, because these values cross process boundaries
// (host <-> renderer over IPC or HTTP). No Node, DOM or Electron imports: this folder is the contract.
import { z } from 'zod';

/** The status of one worktree's MCP server, as a tagged union. */
export const ServerStatusSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('stopped') }),
  z.object({ state: z.literal('starting') }),
  z.object({ state: z.literal('running'), port: z.number().int().positive() }),
  z.object({ state: z.literal('error'), message: z.string() }),
]);
export type ServerStatus = z.infer<typeof ServerStatusSchema>;

/** The two URLs a client uses to reach a worktree's server. */
export const ServerUrlsSchema = z.object({
  /** Legacy HTTP+SSE endpoint (Claude Desktop through mcp-remote). */
  sse: z.string(),
  /** Streamable HTTP endpoint (sessionful legacy clients and modern stateless clients). */
  mcp: z.string(),
});
export type ServerUrls = z.infer<typeof ServerUrlsSchema>;

export const WorktreeStateSchema = z.object({
  /** Stable identifier (the app database's id, as a string). */
  id: z.string(),
  repoId: z.string(),
  /** Absolute path of the worktree's root directory. */
  path: z.string(),
  /** Checked-out branch name, or null for a detached HEAD. */
  branch: z.string().nullable(),
  /** True for the repository's main worktree. */
  isMain: z.boolean(),
  /** The port this worktree's server uses; stable across restarts. */
  port: z.number().int().positive(),
  /** Set when the port had to change (the previous one was taken by another program). */
  portNotice: z.string().nullable(),
  status: ServerStatusSchema,
  urls: ServerUrlsSchema,
});
export type WorktreeState = z.infer<typeof WorktreeStateSchema>;

export const RepoStateSchema = z.object({
  id: z.string(),
  /** Path of the repository's main worktree. */
  path: z.string(),
  /** Display name (the main worktree's directory name). */
  name: z.string(),
  worktrees: z.array(WorktreeStateSchema),
});
export type RepoState = z.infer<typeof RepoStateSchema>;

export const HostSnapshotSchema = z.object({
  repos: z.array(RepoStateSchema),
});
export type HostSnapshot = z.infer<typeof HostSnapshotSchema>;

/** What a client needs to connect to one worktree's server (the token is a secret). */
export const ConnectionInfoSchema = z.object({
  worktreeId: z.string(),
  urls: ServerUrlsSchema,
  token: z.string(),
});
export type ConnectionInfo = z.infer<typeof ConnectionInfoSchema>;

/** Builds the URLs of a server listening on 127.0.0.1:port. */
export function serverUrls(port: number): ServerUrls {
  return { sse: `http://127.0.0.1:${port}/sse`, mcp: `http://127.0.0.1:${port}/mcp` };
}
