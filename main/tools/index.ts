// The file tools every worktree's MCP server registers: read-only and confined to the worktree
// by the sandbox (sandbox.ts).
import { listDirectoryTool } from './list-directory.ts';
import { readFileTool } from './read-file.ts';
import type { ToolDefinition } from './tool-definition.ts';

export { listDirectoryTool } from './list-directory.ts';
export { readFileTool } from './read-file.ts';

/** Registered on every MCP session, in this order. */
export const fileTools: ToolDefinition[] = [readFileTool, listDirectoryTool];
