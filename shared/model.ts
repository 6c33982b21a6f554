// The host's data model as every side sees it: repos, worktrees and the status of each worktree's
// MCP server. Runtime schemas (zod) live here too, because these values cross process boundaries
// (host <-> renderer over IPC or HTTP). No Node, DOM or Electron imports: this folder is the contract.
import { z } from 'zod';
import { ReconcileStateSchema, ReconcileTotalsSchema } from './reconcile.ts';

/** The status of one worktree's MCP server, as a tagged union. */
export const ServerStatusSchema = z.discriminatedUnion('state', [
  z.object({ state: z.literal('stopped') }),
  z.object({
    state: z.literal('starting'),
    /**
     * What the start waits for, once it is slow (over 5 s) or waits on purpose: "port 47110 is
     * held by the previous Grove server of this worktree, which is stopping; waiting for it".
     */
    detail: z.string().optional(),
  }),
  z.object({
    state: z.literal('running'),
    port: z.number().int().positive(),
    /**
     * Set while the process's event loop has not answered the health check for over a second:
     * busy (a long call), reported, not punished; a silence of tens of seconds means hung.
     */
    busySinceMs: z.number().optional(),
  }),
  z.object({
    state: z.literal('error'),
    message: z.string(),
    /** When the supervisor restarts it on its own (epoch ms); absent: it waits for Start. */
    restartAt: z.number().optional(),
  }),
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

/** Per-worktree settings the user controls. */
export const WorktreeSettingsSchema = z.object({
  /** Start this worktree's server when Grove starts. */
  autostart: z.boolean(),
  /** Require the token on every request (off: Host and Origin checks only). */
  requireToken: z.boolean(),
  /**
   * Offer list_just_tasks and run_just_task, which run the worktree's `just` recipes with the
   * user's rights (off by default). The effective state: on when `justTasksByHost` is.
   */
  justTasks: z.boolean().optional(),
  /** On for every worktree by the host's own setting (`grove serve --just-tasks`). */
  justTasksByHost: z.boolean().optional(),
});
export type WorktreeSettings = z.infer<typeof WorktreeSettingsSchema>;

/**
 * How a client reaches the server: legacy SSE, Streamable HTTP, or `stdio` — a stdio client
 * (Claude Desktop...) through `grove bridge`, which forwards its messages over Streamable HTTP.
 */
export const ClientTransportSchema = z.enum(['sse', 'streamable-http', 'stdio']);
export const ClientEraSchema = z.enum(['legacy', 'modern']);

/** One MCP client of a worktree's server, as the Clients list shows it. */
export const ClientInfoSchema = z.object({
  /** The session id (legacy), or the client's identity (modern clients hold no session). */
  id: z.string(),
  name: z.string(),
  version: z.string(),
  transport: ClientTransportSchema,
  era: ClientEraSchema,
  /** `open`/`closed` for sessions; `stateless` for modern clients (no session). */
  connection: z.enum(['open', 'closed', 'stateless']),
  /**
   * A stream to the client is open now (an SSE session; a Streamable HTTP session's GET stream).
   * Its state (shared/clients.ts): connected with a stream, else active or idle by last activity.
   */
  streamOpen: z.boolean(),
  /** Unix ms of the session's start (legacy) or the first request seen (modern). */
  firstSeenAt: z.number(),
  /** Unix ms of the client's last request, stream opening or closing. */
  lastActivityAt: z.number(),
  /**
   * Unix ms of when the client left (its session ended, or its stream closed and did not come
   * back); set while `connection` is `closed`.
   */
  closedAt: z.number().optional(),
  calls: z.number().int().nonnegative(),
});
export type ClientInfo = z.infer<typeof ClientInfoSchema>;

/** One tool call in a worktree's activity log. */
export const ActivityEntrySchema = z.object({
  /** Unique within the worktree process's lifetime (`<pid>-<n>`). */
  id: z.string(),
  at: z.number(),
  clientId: z.string().nullable(),
  clientName: z.string(),
  tool: z.string(),
  /** Compact JSON of the arguments, cut to a few hundred characters. */
  argumentsSummary: z.string(),
  durationMs: z.number(),
  /** Size of the result's text in bytes. */
  resultBytes: z.number().int().nonnegative(),
  ok: z.boolean(),
  /** The error message a failed call returned. */
  error: z.string().nullable(),
});
export type ActivityEntry = z.infer<typeof ActivityEntrySchema>;

/**
 * What one activity entry may hold, in UTF-16 code units: a client chooses a call's arguments and
 * so, through tools that echo them, its error (a 3.5 MB argument made each entry 7 MB, and the
 * app database 3 GB). The longest argument summary and error kept; longer ones are cut with "…".
 */
export const ACTIVITY_TEXT_CHARS = { argumentsSummary: 300, error: 1_000, name: 200 } as const;

/**
 * The longest stored activity entry (its JSON, in UTF-16 code units) the host reads back: entries
 * are cut (boundActivityEntry) well below this, so a longer row was written by a Grove before the
 * cut, or planted; reading it back is skipped rather than risking the host's memory.
 */
export const MAX_STORED_ACTIVITY_CHARS = 64 * 1024;

/** `text` cut to `max` code units, ending in "…", never splitting a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose pair would be cut off
  return `${text.slice(0, end)}…`;
}

/**
 * An activity entry with every text a client can choose cut to ACTIVITY_TEXT_CHARS: the same entry
 * when nothing is over. Applied where entries are made (the worktree process), where the host takes
 * them in (before the window, `/api/events` and the app database see them) and when read back.
 */
export function boundActivityEntry(entry: ActivityEntry): ActivityEntry {
  const { argumentsSummary, error, name } = ACTIVITY_TEXT_CHARS;
  const bounded: ActivityEntry = {
    ...entry,
    id: cutText(entry.id, name),
    clientId: entry.clientId === null ? null : cutText(entry.clientId, name),
    clientName: cutText(entry.clientName, name),
    tool: cutText(entry.tool, name),
    argumentsSummary: cutText(entry.argumentsSummary, argumentsSummary),
    error: entry.error === null ? null : cutText(entry.error, error),
  };
  const changed = (Object.keys(bounded) as (keyof ActivityEntry)[]).some(
    (key) => bounded[key] !== entry[key],
  );
  return changed ? bounded : entry;
}

/** A tool call still running (the Activity tab shows it with its time so far and a Cancel button). */
export const RunningCallSchema = z.object({
  /** The worktree process's id of the call (what cancelToolCall takes). */
  id: z.string(),
  startedAt: z.number(),
  clientId: z.string().nullable(),
  clientName: z.string(),
  tool: z.string(),
  argumentsSummary: z.string(),
});
export type RunningCall = z.infer<typeof RunningCallSchema>;

/** A just task running now (the Server tab lists it with a Stop button). */
export const RunningTaskSchema = z.object({
  /** The worktree process's id of the run (what stopTask takes). */
  id: z.string(),
  task: z.string(),
  args: z.array(z.string()),
  startedAt: z.number(),
  /** The client that asked for it, when it said its name. */
  clientName: z.string().nullable(),
});
export type RunningTask = z.infer<typeof RunningTaskSchema>;

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
  /**
   * The port this worktree had before another program took it (the one older client configs
   * name), until the user takes it back or keeps the new one; null or absent: it never moved.
   */
  movedFromPort: z.number().int().positive().nullable().optional(),
  status: ServerStatusSchema,
  urls: ServerUrlsSchema,
  settings: WorktreeSettingsSchema,
  /** Clients of this worktree's server: open sessions, recently closed ones, modern clients. */
  clients: z.array(ClientInfoSchema),
  /**
   * Health checks today: clients that connected, made no tool call, left, and were dropped from
   * `clients` after a few minutes (`claude mcp list`, `gemini mcp list`...).
   */
  healthChecksToday: z.number().int().nonnegative().optional(),
  /** Tool calls running now, oldest first. */
  runningCalls: z.array(RunningCallSchema),
  /** Just tasks running now, oldest first (the host always sends it; absent reads as none). */
  runningTasks: z.array(RunningTaskSchema).optional(),
  /** The base branch reconciliation compares against (null: the repo's default branch). */
  reconcileBase: z.string().nullable(),
  /** Reconciliation totals for the sidebar (the full state is in the snapshot's `reconcile`). */
  reconcileTotals: ReconcileTotalsSchema.nullable(),
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
  /** Recent tool calls per worktree id, oldest first (bounded). */
  activity: z.record(z.string(), z.array(ActivityEntrySchema)),
  /** The latest reconciliation state per worktree id (absent until its server computed one). */
  reconcile: z.record(z.string(), ReconcileStateSchema),
});
export type HostSnapshot = z.infer<typeof HostSnapshotSchema>;

/** What a client needs to connect to one worktree's server (the token is a secret). */
/** A command line that runs `grove bridge` for one worktree (stdio clients: Claude Desktop...). */
export const BridgeCommandSchema = z.object({ command: z.string(), args: z.array(z.string()) });
export type BridgeCommand = z.infer<typeof BridgeCommandSchema>;

export const ConnectionInfoSchema = z.object({
  worktreeId: z.string(),
  urls: ServerUrlsSchema,
  token: z.string(),
  /** The stdio bridge to this worktree, as this machine runs it (main/host/bridge-launcher.ts). */
  bridge: BridgeCommandSchema,
});
export type ConnectionInfo = z.infer<typeof ConnectionInfoSchema>;

/** Builds the URLs of a server listening on 127.0.0.1:port. */
export function serverUrls(port: number): ServerUrls {
  return { sse: `http://127.0.0.1:${port}/sse`, mcp: `http://127.0.0.1:${port}/mcp` };
}
