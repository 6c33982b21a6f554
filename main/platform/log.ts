// Grove's logger: levelled, structured records (time, level, scope, message, data) written to
// sinks. The host writes every record — its own and those its worktree processes send over IPC —
// to `<data dir>/grove.log` (JSON lines, rotated by size) and the warnings and errors to
// stderr too. A worktree process's logger forwards its records to the host; what an MCP client
// should see goes to the client over MCP's `logging` channel separately (mcp-listener.ts `log`).
// No library: the volume is a few lines a minute, and the one we would pick (pino) writes files
// through worker threads in every process; docs/decisions.md ("Logging").
import { closeSync, constants, fstatSync, openSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import { LOG_LEVELS, type LogLevel } from '../../shared/log-levels.ts';
import type { LogRecord } from '../../shared/log-record.ts';

export type LogSink = (record: LogRecord) => void;

export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
  /** A logger whose records carry `scope` (appended to this one's: `worktree /x: mcp`). */
  child(scope: string): Logger;
  /**
   * Writes a record another process logged (a worktree process's, received over IPC), its scope
   * placed under this logger's.
   */
  forward(record: LogRecord): void;
}

const rank = (level: LogLevel): number => LOG_LEVELS.indexOf(level);

/** A logger writing records at `minLevel` and above to every sink. A failing sink is skipped. */
export function createLogger(
  sinks: readonly LogSink[],
  options: { scope?: string; minLevel?: LogLevel } = {},
): Logger {
  const scope = options.scope ?? 'grove';
  const min = rank(options.minLevel ?? 'info');
  const emit = (record: LogRecord): void => {
    if (rank(record.level) < min) return;
    for (const sink of sinks) {
      try {
        sink(record);
      } catch {
        // A log that cannot be written must never become the failure.
      }
    }
  };
  const write = (level: LogLevel, message: string, data?: Record<string, unknown>): void => {
    const record: LogRecord = { time: new Date().toISOString(), level, scope, message };
    if (data !== undefined) record.data = data;
    emit(record);
  };
  return {
    debug: (message, data) => write('debug', message, data),
    info: (message, data) => write('info', message, data),
    warn: (message, data) => write('warn', message, data),
    error: (message, data) => write('error', message, data),
    child: (child) => createLogger(sinks, { ...options, scope: `${scope}: ${child}` }),
    forward: (record) => {
      const own = record.scope.replace(/^grove(: |$)/, '');
      emit({ ...record, scope: own ? `${scope}: ${own}` : scope });
    },
  };
}

/** A logger that drops everything (for code whose caller passed none). */
export const silentLogger: Logger = createLogger([]);

/** One line a person reads: `grove: <scope>: <message>` (the `grove` scope is not repeated). */
export function formatLogLine(record: LogRecord): string {
  const scope = record.scope === 'grove' ? '' : `${record.scope.replace(/^grove: /, '')}: `;
  const level = record.level === 'warn' || record.level === 'error' ? `${record.level}: ` : '';
  return `grove: ${level}${scope}${record.message}`;
}

/** Writes records at `minLevel` and above to stderr as readable lines. */
export function stderrSink(minLevel: LogLevel = 'warn'): LogSink {
  return (record) => {
    if (rank(record.level) >= rank(minLevel)) process.stderr.write(`${formatLogLine(record)}\n`);
  };
}

export const LOG_FILE_NAME = 'grove.log';
/** A log file is rotated once it reaches this size; `keep` older files are kept. */
export const LOG_FILE_MAX_BYTES = 5 * 1024 * 1024;
export const LOG_FILES_KEPT = 3;

/**
 * JSON lines appended to `<directory>/grove.log`, rotated by size: grove.log → grove.1.log →
 * grove.2.log ... (the oldest dropped). Each record is one write(2) of one line on a descriptor
 * opened with O_APPEND and O_NOFOLLOW (0600): a few microseconds, and two processes never interleave a line.
 * The directory is the host's own data directory, never a worktree.
 */
export class RotatingLogFile {
  readonly file: string;
  readonly #maxBytes: number;
  readonly #keep: number;
  #fd: number | undefined;
  #size = 0;

  constructor(
    directory: string,
    options: { maxBytes?: number; keep?: number; name?: string } = {},
  ) {
    this.file = path.join(directory, options.name ?? LOG_FILE_NAME);
    this.#maxBytes = options.maxBytes ?? LOG_FILE_MAX_BYTES;
    this.#keep = options.keep ?? LOG_FILES_KEPT;
  }

  readonly sink: LogSink = (record) => this.write(`${JSON.stringify(record)}\n`);

  write(line: string): void {
    const bytes = Buffer.from(line, 'utf8');
    if (this.#fd !== undefined && this.#size + bytes.length > this.#maxBytes) this.#rotate();
    if (this.#fd === undefined) {
      const { O_APPEND, O_CREAT, O_WRONLY, O_NOFOLLOW } = constants;
      this.#fd = openSync(this.file, O_APPEND | O_CREAT | O_WRONLY | O_NOFOLLOW, 0o600);
      this.#size = fstatSync(this.#fd).size;
    }
    writeSync(this.#fd, bytes);
    this.#size += bytes.length;
  }

  #rotate(): void {
    this.close();
    const numbered = (index: number) => this.file.replace(/\.log$/, `.${index}.log`);
    for (let index = this.#keep; index >= 1; index--) {
      const from = index === 1 ? this.file : numbered(index - 1);
      try {
        renameSync(from, numbered(index));
      } catch {
        // Not there yet.
      }
    }
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    this.#size = 0;
  }
}
