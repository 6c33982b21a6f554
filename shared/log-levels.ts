// The log levels, lowest first: apart from the record's schema (log-record.ts) so that the logger
// (main/platform/log.ts), which every command loads, does not load zod with them.
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
