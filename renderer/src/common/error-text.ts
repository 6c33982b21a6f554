// The message of anything a command or a promise rejected with, for the window to show.
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
