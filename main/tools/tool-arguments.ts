// Argument parsing shared by the file tools: validates a call's raw arguments against the tool's
// input schema (again, if the MCP layer already did) and turns a mismatch into a UserError.
import { z } from 'zod';
import { UserError } from '../platform/errors.ts';

/** Parses `raw` with `schema`, applying defaults; throws UserError listing every problem. */
export function parseToolArguments<S extends z.ZodObject>(
  toolName: string,
  schema: S,
  raw: unknown,
): z.infer<S> {
  const result = schema.safeParse(raw ?? {});
  if (!result.success) {
    throw new UserError(`invalid arguments for ${toolName}:\n${z.prettifyError(result.error)}`);
  }
  return result.data;
}

/** "1.5 MiB (1572864 bytes)". */
export function formatSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${bytes} bytes`;
  return `${value.toFixed(1)} ${units[unit]} (${bytes} bytes)`;
}
