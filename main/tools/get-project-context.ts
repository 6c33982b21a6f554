// The get_project_context tool: one call that orients a model in this worktree — branch, HEAD,
// upstream and ahead/behind, changed and untracked files, the repository's other worktrees, the
// spec summary (from a provider the reconciliation engine plugs in), the active just tasks (from
// a provider the worktree server plugs in), the containers of the worktree's compose file
// (`docker compose ps`) and this server's own URLs. The task and container parts each have a
// short deadline and never fail the call: they say what they could not find out instead.
// Built by a factory because the URLs and the providers belong to the running server.
import path from 'node:path';
import { z } from 'zod';
import { firstFileInRoot } from '../platform/confined-fs.ts';
import { otherWorktrees, repositoryStatus } from '../platform/git/repository-status.ts';
import { childEnvironment, runProcess, type ProcessOutput } from '../platform/run-process.ts';
import { parseToolArguments } from './tool-arguments.ts';
import { defineTool, orNull, readOnlyLocal, type ToolDefinition } from './tool-definition.ts';
import { SAMPLE_PATHS } from './tool-constants.ts';

/** The server's own endpoints (never the token). */
export interface ServerEndpoints {
  /** Legacy HTTP+SSE: `GET /sse`. */
  sse: string;
  /** Streamable HTTP: `/mcp`. */
  streamable_http: string;
}

const specSummarySchema = z.object({
  total: z.number().int().describe('Number of spec files (*.spec.yaml under .notarai/).'),
  paths: z.array(z.string()).describe(`The first ${SAMPLE_PATHS} spec paths.`),
  system_spec: orNull(z.string()).describe('Path of the system spec, or null if there is none.'),
  invalid: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .describe('Specs that fail validation, with the problem.'),
  drifted: z
    .object({
      specs: z.number().int().describe('Specs with changed governed files.'),
      files: z.number().int().describe('Changed governed files not yet reconciled.'),
    })
    .nullable()
    .describe('From the reconciliation state; null when it is not known yet.'),
});

/** What the reconciliation engine reports about specs (get_project_context's `specs`). */
export type SpecSummary = z.infer<typeof specSummarySchema>;

/** Supplies the spec summary; the reconciliation engine provides it. */
export type SpecSummaryProvider = (signal: AbortSignal) => Promise<SpecSummary>;

export interface ProjectContextOptions {
  /** This server's URLs, or a getter for them (known once the listener is bound). */
  serverUrls?: ServerEndpoints | (() => ServerEndpoints | undefined);
  /** Absent until the reconciliation engine exists: the result then says `specs: null`. */
  specSummary?: SpecSummaryProvider;
  /** The just tasks' state; absent: `active_tasks` says tasks are off. */
  activeTasks?: ActiveTasksProvider;
}

/** How long get_project_context waits for `docker compose ps` and for the recipe list. */
export const CONTEXT_PROBE_TIMEOUT_MS = 3_000;
/** Compose files looked for in the worktree root, in docker compose's own order. */
export const COMPOSE_FILE_NAMES = [
  'compose.yaml',
  'compose.yml',
  'docker-compose.yaml',
  'docker-compose.yml',
] as const;
/** Containers listed at most. */
export const MAX_CONTAINERS = 50;
/** Most output of `docker compose ps` read; past it docker is stopped and the answer says so. */
export const MAX_COMPOSE_PS_BYTES = 4 * 1024 * 1024;
/** Longest docker message echoed (the first line of its stderr, when it says the daemon is down). */
export const MAX_DOCKER_MESSAGE_CHARS = 200;

/** A just task run going on now (main/tools/just-tasks.ts). */
export interface ActiveTaskRun {
  task: string;
  args: string[];
  startedAt: number;
}

/** The just tasks' state, for `active_tasks` (the worktree server plugs it in). */
export interface ActiveTasksProvider {
  /** Whether list_just_tasks and run_just_task are offered. */
  enabled(): boolean;
  running(): ActiveTaskRun[];
  /** Names of the recipes on offer (rejects when there is no justfile or just fails). */
  recipes(root: string, signal: AbortSignal): Promise<string[]>;
}

const activeTasksSchema = z.object({
  enabled: z
    .boolean()
    .describe(
      'Whether run_just_task is on for this worktree (off by default; the user turns it on).',
    ),
  running: z
    .array(
      z.object({
        task: z.string(),
        args: z.array(z.string()),
        elapsed_ms: z.number().int().describe('How long it has been running.'),
      }),
    )
    .describe('run_just_task calls running now.'),
  recipes: orNull(z.array(z.string())).describe(
    'Recipes run_just_task can run; null when tasks are off or the list is unavailable.',
  ),
  recipes_unavailable: z.string().optional().describe('Why recipes is null while tasks are on.'),
});

const containerSchema = z.object({
  name: z.string().describe('Container name.'),
  service: z.string().describe('Compose service.'),
  state: z.string().describe('running, exited, paused, restarting...'),
  status: z
    .string()
    .describe('Docker\'s status line ("Up 2 hours (healthy)"); empty if not given.'),
  health: orNull(z.string()).describe('healthy, unhealthy, starting; null without a health check.'),
  ports: z.string().describe('Published ports; empty when none.'),
});

const containersSchema = z.object({
  compose_file: z.string().describe('The compose file found in the worktree root.'),
  services: orNull(z.array(containerSchema)).describe(
    `Containers of this compose project (\`docker compose ps\`, first ${MAX_CONTAINERS}); null when docker could not tell (see unavailable).`,
  ),
  unavailable: z
    .string()
    .optional()
    .describe('Why services is null: docker not installed, not running, or not answering.'),
});

type ActiveTasks = z.infer<typeof activeTasksSchema>;
type Containers = z.infer<typeof containersSchema>;
type Container = z.infer<typeof containerSchema>;

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A signal that aborts with `parent` or after `ms`. */
function bounded(parent: AbortSignal, ms: number): AbortSignal {
  return AbortSignal.any([parent, AbortSignal.timeout(ms)]);
}

async function activeTasksOf(
  provider: ActiveTasksProvider | undefined,
  root: string,
  signal: AbortSignal,
): Promise<ActiveTasks> {
  if (provider === undefined) return { enabled: false, running: [], recipes: null };
  const now = Date.now();
  const running = provider.running().map((run) => ({
    task: run.task,
    args: run.args,
    elapsed_ms: Math.max(0, Math.round(now - run.startedAt)),
  }));
  if (!provider.enabled()) return { enabled: false, running, recipes: null };
  const probe = bounded(signal, CONTEXT_PROBE_TIMEOUT_MS);
  try {
    const recipes = await Promise.race([provider.recipes(root, probe), rejectOnAbort(probe)]);
    return { enabled: true, running, recipes };
  } catch (error) {
    const why =
      probe.aborted && !signal.aborted
        ? `listing the recipes took longer than ${CONTEXT_PROBE_TIMEOUT_MS / 1000} s`
        : reason(error);
    return { enabled: true, running, recipes: null, recipes_unavailable: why };
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(new Error('aborted'));
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
}

/** `docker compose ps --format json` output: one object per line (newer) or one array (older). */
export function parseComposePs(output: string): Container[] {
  const text = output.trim();
  if (text === '') return [];
  const items: unknown[] = text.startsWith('[')
    ? (JSON.parse(text) as unknown[])
    : text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as unknown);
  return items.slice(0, MAX_CONTAINERS).map((item) => {
    const raw = (item ?? {}) as Record<string, unknown>;
    const text = (value: unknown): string => (typeof value === 'string' ? value : '');
    return {
      name: text(raw.Name),
      service: text(raw.Service),
      state: text(raw.State),
      status: text(raw.Status),
      health: text(raw.Health) === '' ? null : text(raw.Health),
      ports: text(raw.Ports) || publishers(raw.Publishers),
    };
  });
}

/** Older docker has no `Ports` string, only `Publishers`. */
function publishers(value: unknown): string {
  if (!Array.isArray(value)) return '';
  return value
    .map(
      (entry) =>
        entry as {
          URL?: unknown;
          PublishedPort?: unknown;
          TargetPort?: unknown;
          Protocol?: unknown;
        },
    )
    .filter((entry) => typeof entry.TargetPort === 'number')
    .map((entry) =>
      typeof entry.PublishedPort === 'number' && entry.PublishedPort > 0
        ? `${String(entry.URL ?? '')}:${entry.PublishedPort}->${entry.TargetPort}/${String(entry.Protocol ?? 'tcp')}`
        : `${entry.TargetPort}/${String(entry.Protocol ?? 'tcp')}`,
    )
    .join(', ');
}

/** Why docker gave no answer, in one line. */
function dockerUnavailable(output: ProcessOutput): string {
  if (output.startError?.code === 'ENOENT') return 'docker is not installed (no docker on PATH)';
  if (output.stopped === 'timeout') {
    return `docker did not answer within ${CONTEXT_PROBE_TIMEOUT_MS / 1000} s`;
  }
  if (output.stopped === 'cancelled') return 'cancelled';
  if (output.stopped === 'output-cap') {
    return (
      `docker compose ps printed more than ${MAX_COMPOSE_PS_BYTES / (1024 * 1024)} MiB and was ` +
      'stopped at that cap: run `docker compose ps` in the worktree to see it'
    );
  }
  if (output.startError) return `docker could not start: ${output.startError.message}`;
  const firstLine = output.stderr.toString('utf8').trim().split('\n')[0] ?? '';
  const message =
    firstLine.length <= MAX_DOCKER_MESSAGE_CHARS
      ? firstLine
      : `${firstLine.slice(0, MAX_DOCKER_MESSAGE_CHARS - 1)}…`;
  if (
    /cannot connect to the docker daemon|docker daemon (is not|isn't) running|is the docker daemon running/i.test(
      message,
    )
  ) {
    return `docker is not running: ${message}`;
  }
  // Not its message: compose quotes the line it could not parse, and the compose file may name
  // files outside the worktree (env_file, extends, include).
  return (
    `docker compose ps failed (exit ${output.code}); its message is not shown (it may quote ` +
    'files outside the worktree): run `docker compose ps` in the worktree to see it'
  );
}

async function containersOf(root: string, signal: AbortSignal): Promise<Containers | null> {
  const found = await firstFileInRoot(root, COMPOSE_FILE_NAMES);
  if (found === undefined) return null;
  const compose = { relative: found.relativePath, real: found.realPath };
  const output = await runProcess(
    'docker',
    ['compose', '--file', compose.real, '--project-directory', root, 'ps', '--format', 'json'],
    {
      cwd: root,
      env: childEnvironment(),
      signal,
      timeoutMs: CONTEXT_PROBE_TIMEOUT_MS,
      maxStdoutBytes: MAX_COMPOSE_PS_BYTES,
      // Only its first line may be shown.
      maxStderrBytes: 4 * 1024,
      onOverflow: 'kill',
      // docker runs compose as a plugin process of its own: stopped, both go.
      processGroup: true,
    },
  );
  if (output.code !== 0) {
    return {
      compose_file: compose.relative,
      services: null,
      unavailable: dockerUnavailable(output),
    };
  }
  try {
    return {
      compose_file: compose.relative,
      services: parseComposePs(output.stdout.toString('utf8')),
    };
  } catch (error) {
    return {
      compose_file: compose.relative,
      services: null,
      unavailable: `docker compose ps printed something other than JSON: ${reason(error)}`,
    };
  }
}

/** `containersOf`, never failing. */
async function containersNeverFailing(
  root: string,
  signal: AbortSignal,
): Promise<Containers | null> {
  try {
    return await containersOf(root, signal);
  } catch (error) {
    return { compose_file: '', services: null, unavailable: reason(error) };
  }
}

const inputSchema = z.strictObject({});

const outputSchema = z.object({
  root: z.string().describe('Absolute path of this worktree on the machine running Grove.'),
  branch: orNull(z.string()).describe('Current branch, or null when HEAD is detached.'),
  head: z
    .object({
      commit: z.string().describe('Full commit hash.'),
      subject: z.string().describe('First line of the commit message.'),
      date: z.string().describe('Committer date, ISO 8601.'),
    })
    .nullable()
    .describe('HEAD commit; null in a repository without commits.'),
  upstream: z
    .object({
      name: z.string().describe('Upstream branch, e.g. origin/main.'),
      ahead: orNull(z.number().int()).describe('Local commits not on the upstream.'),
      behind: orNull(z.number().int()).describe('Upstream commits not merged locally.'),
    })
    .nullable()
    .describe('Null when the branch has no upstream.'),
  changes: z
    .object({
      changed: z.number().int().describe('Tracked files with staged or unstaged changes.'),
      staged: z.number().int().describe('Files with a staged change.'),
      unstaged: z.number().int().describe('Files with an unstaged change.'),
      conflicted: z.number().int().describe('Files with merge conflicts.'),
      untracked: z.number().int().describe('Untracked files git does not ignore.'),
      changed_paths: z.array(z.string()).describe(`The first ${SAMPLE_PATHS} changed files.`),
      untracked_paths: z.array(z.string()).describe(`The first ${SAMPLE_PATHS} untracked files.`),
    })
    .nullable()
    .describe('Working tree changes; null when git could not tell (not a repository).'),
  worktrees: z
    .array(
      z.object({
        path: z.string().describe('Absolute path of the worktree.'),
        branch: orNull(z.string()).describe('Its branch, or null when detached.'),
        head: orNull(z.string()).describe('Its HEAD commit.'),
        missing: z.boolean().describe('Its directory is gone.'),
      }),
    )
    .describe("The repository's other worktrees (each has its own Grove server)."),
  specs: specSummarySchema
    .nullable()
    .describe('Summary of the NotarAI specs; null when unavailable (see specs_unavailable).'),
  specs_unavailable: z.string().optional().describe('Why specs is null.'),
  server: z
    .object({
      sse: z.string().describe('Legacy HTTP+SSE endpoint (GET /sse).'),
      streamable_http: z.string().describe('Streamable HTTP endpoint (/mcp).'),
    })
    .nullable()
    .describe("This MCP server's own URLs (the token is not included)."),
  active_tasks: activeTasksSchema.describe(
    'The just tasks: whether they are on, run_just_task calls running now, recipes on offer.',
  ),
  containers: containersSchema
    .nullable()
    .describe(
      `Container status of the compose file in the worktree root (${COMPOSE_FILE_NAMES.join(', ')}); null when there is none.`,
    ),
});

export type ProjectContextResult = z.infer<typeof outputSchema>;

async function specsOf(
  provider: SpecSummaryProvider | undefined,
  signal: AbortSignal,
): Promise<Pick<ProjectContextResult, 'specs' | 'specs_unavailable'>> {
  if (provider === undefined) {
    return {
      specs: null,
      specs_unavailable: 'the reconciliation engine is not running in this server',
    };
  }
  try {
    return { specs: specSummarySchema.parse(await provider(signal)) };
  } catch (error) {
    return {
      specs: null,
      specs_unavailable: `the spec summary failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

/** Builds the get_project_context tool for one server. */
export function createProjectContextTool(options: ProjectContextOptions = {}): ToolDefinition {
  const urls = (): ServerEndpoints | undefined =>
    typeof options.serverUrls === 'function' ? options.serverUrls() : options.serverUrls;
  return defineTool({
    name: 'get_project_context',
    title: 'Get project context',
    description:
      'Orientation in this worktree in one call (read-only): current branch, HEAD commit and ' +
      'subject, upstream with ahead/behind counts, counts of changed, staged, conflicted and ' +
      `untracked files with the first ${SAMPLE_PATHS} paths of each, the repository's other ` +
      'worktrees and their branches, a summary of the NotarAI specs (total, system spec, invalid ' +
      "specs, drift) when the reconciliation engine is available, this server's own URLs, the " +
      'active just tasks (running run_just_task calls with their elapsed time, the recipes on ' +
      'offer when tasks are on) and, when the worktree root has a compose file, its containers ' +
      '(`docker compose ps`; if docker is not installed or not running, one field says so). ' +
      'Takes no arguments.',
    inputSchema,
    outputSchema,
    annotations: readOnlyLocal,
    handler: async (rawArgs, ctx) => {
      parseToolArguments('get_project_context', inputSchema, rawArgs);
      const query = {
        ceiling: path.dirname(ctx.root),
        signal: ctx.signal,
        samplePaths: SAMPLE_PATHS,
      };
      const [status, worktrees, specs, activeTasks, containers] = await Promise.all([
        repositoryStatus(ctx.root, query),
        otherWorktrees(ctx.root, query),
        specsOf(options.specSummary, ctx.signal),
        activeTasksOf(options.activeTasks, ctx.root, ctx.signal),
        containersNeverFailing(ctx.root, ctx.signal),
      ]);
      const result: ProjectContextResult = {
        root: ctx.root,
        branch: status?.branch ?? null,
        head: status?.head ?? null,
        upstream: status?.upstream ?? null,
        changes: status?.changes ?? null,
        worktrees: worktrees ?? [],
        ...specs,
        server: urls() ?? null,
        active_tasks: activeTasks,
        containers,
      };
      return result;
    },
  });
}
