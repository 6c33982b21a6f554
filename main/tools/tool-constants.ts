// Constants of the tools that code outside them needs before any tool is loaded: the MCP listener
// loads the tool definitions (and their zod schemas) on the first MCP request, while the worktree
// server must already know which tools are opt-in and the reconciliation service how many paths
// get_project_context's summary shows.

/** The opt-in just task tools (just-tasks.ts). */
export const LIST_JUST_TASKS = 'list_just_tasks';
export const RUN_JUST_TASK = 'run_just_task';
export const JUST_TASK_TOOL_NAMES: readonly string[] = [LIST_JUST_TASKS, RUN_JUST_TASK];

/** How many paths get_project_context lists in each of its samples. */
export const SAMPLE_PATHS = 10;
