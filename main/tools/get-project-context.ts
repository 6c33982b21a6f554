// The get_project_context tool: one call that orients a model in this worktree — branch, HEAD,
// upstream and ahead/behind, changed and untracked files, the repository's other worktrees, the
// spec summary (from a provider the reconciliation engine plugs in) and this server's own URLs.
// Built by a factory because the URLs and the provider belong to the running server.
import path from 'node:path';
import { z } from 'zod';
import { otherWorktrees, repositoryStatus } from '../platform/git/repository-status.ts';
import { parseToolArguments } from './tool-arguments.ts';
import { defineTool, orNull, readOnlyLocal, type ToolDefinition } from './tool-definition.ts';

/** Paths listed per kind (changed, untracked) and specs listed. */
export const SAMPLE_PATHS = 10;

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
      "specs, drift) when the reconciliation engine is available, and this server's own URLs. " +
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
      const [status, worktrees, specs] = await Promise.all([
        repositoryStatus(ctx.root, query),
        otherWorktrees(ctx.root, query),
        specsOf(options.specSummary, ctx.signal),
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
      };
      return result;
    },
  });
}
