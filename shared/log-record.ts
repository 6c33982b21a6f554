// One log record, as Grove's logger writes it (main/platform/log.ts) and a worktree process sends
// it to the host (shared/worktree-protocol.ts).
import { z } from 'zod';
import { LOG_LEVELS } from './log-levels.ts';

export { LOG_LEVELS, type LogLevel } from './log-levels.ts';

export const LogRecordSchema = z.object({
  time: z.string(),
  level: z.enum(LOG_LEVELS),
  /** Who wrote it: `grove`, `grove: worktree /path/to/worktree`, `...: mcp`. */
  scope: z.string(),
  message: z.string(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type LogRecord = z.infer<typeof LogRecordSchema>;
