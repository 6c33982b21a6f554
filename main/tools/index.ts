// The one tool registry: every tool a worktree's MCP server registers, each defined once (name,
// title, description, input and output schemas, annotations, handler). The MCP server registers the
// list on every session and leg; the UI's tool console and docs/tools.md
// (scripts/generate-tool-docs.ts) read the same list. All read-only and confined to the worktree by
// the sandbox (sandbox.ts).
import { directoryTreeTool } from './directory-tree.ts';
import { getFileInfoTool } from './get-file-info.ts';
import { createProjectContextTool, type ProjectContextOptions } from './get-project-context.ts';
import { grepTool } from './grep.ts';
import { listDirectoryTool } from './list-directory.ts';
import { readFileTool } from './read-file.ts';
import { readMultipleFilesTool } from './read-multiple-files.ts';
import { searchFilesTool } from './search-files.ts';
import type { ToolDefinition } from './tool-definition.ts';

export { directoryTreeTool } from './directory-tree.ts';
export { getFileInfoTool } from './get-file-info.ts';
export { createProjectContextTool } from './get-project-context.ts';
export type {
  ProjectContextOptions,
  ServerEndpoints,
  SpecSummary,
  SpecSummaryProvider,
} from './get-project-context.ts';
export { grepTool } from './grep.ts';
export { listDirectoryTool } from './list-directory.ts';
export { readFileTool } from './read-file.ts';
export { readMultipleFilesTool } from './read-multiple-files.ts';
export { searchFilesTool } from './search-files.ts';

/** What the tools need from the server that runs them. */
export type FileToolsOptions = ProjectContextOptions;

/** The tools of one worktree's server, in the order clients list them. */
export function createFileTools(options: FileToolsOptions = {}): ToolDefinition[] {
  return [
    readFileTool,
    readMultipleFilesTool,
    listDirectoryTool,
    directoryTreeTool,
    getFileInfoTool,
    searchFilesTool,
    grepTool,
    createProjectContextTool(options),
  ];
}

/** The tools without server-specific options (no URLs, no spec summary): tests and docs. */
export const fileTools: ToolDefinition[] = createFileTools();
