// The one tool the Coverage tab calls through the host's tool console: read_file, for the lines of
// a spec around a finding. Its result is read with the fields of read_file's output schema the tab
// uses (main/tools/read-file.ts), through common/tool-call.ts.
import { z } from 'zod';
import { callToolWithSchema, type ToolCommands } from '../common/tool-call.ts';

const SpecLinesSchema = z.object({
  path: z.string(),
  content: z.string(),
  start_line: z.number().int(),
  end_line: z.number().int(),
  total_lines: z.number().int(),
});
export type SpecLines = z.infer<typeof SpecLinesSchema>;

/** Lines start_line..end_line (1-based, inclusive; cut at the file's end) of a file. */
export function readLines(
  commands: ToolCommands,
  worktreeId: string,
  path: string,
  range: { start_line: number; end_line: number },
): Promise<SpecLines> {
  return callToolWithSchema(commands, worktreeId, 'read_file', { path, ...range }, SpecLinesSchema);
}
