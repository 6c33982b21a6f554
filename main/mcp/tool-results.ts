// The result of a tool call as the SDK sends it: sorted-key JSON as text plus the same value as
// structuredContent (toolResult), or an error a model can read (toolErrorResult). An answer too big
// to reach the client whole (MAX_ANSWER_BYTES) is an error naming its size and how to ask for less.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { UserError } from '../platform/errors.ts';
import { nextSlice, sliceUsedUp } from '../platform/time-slices.ts';
import type { ToolDefinition } from '../tools/tool-definition.ts';
import { stableStringify } from './stable-json.ts';

/**
 * A successful result: sorted-key JSON as text, and the same value as structuredContent. A big
 * answer (get_spec_diff of 100,000 files: ~5 MB of text) takes tens of ms per step, so the event
 * loop gets a turn between the steps (and before the SDK validates and sends it) once a slice is
 * used up (platform/time-slices.ts).
 */
export async function toolResult(
  value: unknown,
  tool?: Pick<ToolDefinition, 'name' | 'whenAnswerTooBig'>,
): Promise<CallToolResult> {
  if (sliceUsedUp()) await nextSlice(); // (a check before a long step also starts the clock)
  const text = stableStringify(value);
  if (sliceUsedUp()) await nextSlice();
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_ANSWER_BYTES) throw answerTooBig(bytes, tool);
  const structuredContent = JSON.parse(text) as Record<string, unknown>;
  if (sliceUsedUp()) await nextSlice();
  return { content: [{ type: 'text', text }], structuredContent };
}

/**
 * The largest answer a call may return: its JSON text, in UTF-8 bytes. The answer goes out as that
 * text and again as structuredContent, inside a JSON-RPC message that escapes the text once more:
 * at most about three times this on the wire, below the 32 MiB of unread output a response may
 * hold (MAX_SSE_BACKLOG_BYTES). Past that cap the response was cut, and the client saw an HTTP 200
 * with no body and waited out its own timeout (one changed 18 MB file in get_spec_diff).
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The error of an answer over MAX_ANSWER_BYTES: its size, the cap, and how to ask for less. */
function answerTooBig(
  bytes: number,
  tool: Pick<ToolDefinition, 'name' | 'whenAnswerTooBig'> | undefined,
): UserError {
  const mib = (size: number): string => `${(size / (1024 * 1024)).toFixed(1)} MiB`;
  const how = tool?.whenAnswerTooBig ?? 'ask for less (narrow the arguments)';
  return new UserError(
    `the answer${tool ? ` of ${tool.name}` : ''} is ${mib(bytes)} (${bytes} bytes), over the ` +
      `${mib(MAX_ANSWER_BYTES)} an answer may hold, so it was not sent: ${how}`,
    { code: 'too-large' },
  );
}

/** A failed call as a result the model can read (`isError: true`), never a protocol error. */
export function toolErrorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
