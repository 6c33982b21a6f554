// One tool call from the window through the host's tool console (callTool), read with a result
// schema: the structured result parsed with it, the tool's own error text thrown when the call
// failed, or a clear error naming the tool when the result is not what the schema says. The views'
// call helpers (reconcile/reconcile-calls.ts, coverage/coverage-calls.ts) are built on it.
import type { z } from 'zod';
import type { HostCommandMethods } from '../../../shared/host-api.ts';

export type ToolCommands = Pick<HostCommandMethods, 'callTool'>;

export async function callToolWithSchema<S extends z.ZodType>(
  commands: ToolCommands,
  worktreeId: string,
  name: string,
  args: Record<string, unknown>,
  schema: S,
): Promise<z.infer<S>> {
  const result = await commands.callTool({ worktreeId, name, arguments: args });
  if (result.isError) {
    const text = result.content
      .map((block) => (typeof block['text'] === 'string' ? block['text'] : ''))
      .join('\n')
      .trim();
    throw new Error(text || `${name} failed`);
  }
  const parsed = schema.safeParse(result.structuredContent);
  if (!parsed.success) {
    throw new Error(
      `${name} answered with an unexpected result: ${parsed.error.issues[0]?.message}`,
    );
  }
  return parsed.data;
}
