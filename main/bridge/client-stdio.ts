// The client's side of `grove bridge`: newline-delimited JSON-RPC on stdin and stdout (the MCP
// stdio binding), with flow control. Reading stops when the bridge says so (too much in flight or
// unwritten, bridge.ts) and goes on when it says so; a line that is not a message the bridge can
// forward (not JSON, a batch, a bad envelope, past the size cap) is answered here with a JSON-RPC
// error instead of being dropped. Only protocol goes to stdout.
import type { Readable, Writable } from 'node:stream';
import {
  batchRequestIds,
  checkMessage,
  errorAnswer,
  INVALID_REQUEST,
  PARSE_ERROR,
  type JSONRPCMessage,
} from './json-rpc.ts';

/**
 * The longest line read from the client: a worktree server takes bodies up to 4 MiB
 * (main/mcp/mcp-listener.ts MAX_BODY_BYTES), so a longer message could not be served anyway. The
 * rest of a longer line is skipped, never held.
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

export interface ClientStdioOptions {
  input: Readable;
  output: Writable;
  /** A message from the client, checked. */
  onmessage(message: JSONRPCMessage): void;
  /** The client is gone: stdin ended, or stdout can no longer be written. Called once. */
  onclose(): void;
  /** A problem worth a line on stderr. */
  onwarning(message: string): void;
  /**
   * A line was answered here (not JSON, a bad envelope, too long): its answer adds to what the
   * client has not read, so the bridge checks its output bound (a flood of bad lines must stop
   * being read as a flood of requests does).
   */
  onanswered?(): void;
}

export interface ClientStdio {
  /**
   * Writes one message to the client (queued in the output stream while the client reads slowly).
   * `text`: the message as JSON already (from the host), written as is when it is one line.
   */
  send(message: JSONRPCMessage, text?: string): void;
  /** Bytes written to stdout the client has not taken yet. */
  unwritten(): number;
  /** Stops reading stdin and delivering messages (the rest of a chunk read waits for resume). */
  pause(): void;
  resume(): void;
  /** Calls `listener` once when stdout has taken what was queued. */
  onDrain(listener: () => void): void;
  close(): void;
}

export function openClientStdio(options: ClientStdioOptions): ClientStdio {
  const { input, output } = options;
  /** Chunks of the line being read (only its start when it is past the cap). */
  let partial: Buffer[] = [];
  let partialBytes = 0;
  /** The line being read is past MAX_LINE_BYTES: the rest of it is skipped. */
  let skipping = false;
  let closed = false;

  const send = (message: JSONRPCMessage, text?: string): void => {
    if (closed || output.destroyed) return;
    const line = text !== undefined && !/[\r\n]/.test(text) ? text : JSON.stringify(message);
    // As bytes: while the client has not taken them they wait outside the JS heap, and the string
    // dies young instead of growing the heap.
    output.write(Buffer.from(`${line}\n`, 'utf8'));
  };

  /** An answer from here (the line never reaches an upstream). */
  const answer = (message: JSONRPCMessage): void => {
    send(message);
    options.onanswered?.();
  };

  const handleLine = (line: Buffer): void => {
    const text = line.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      answer(errorAnswer(null, PARSE_ERROR, 'Parse error: a line that is not JSON'));
      return;
    }
    const checked = checkMessage(value);
    if (checked.ok) {
      options.onmessage(checked.message);
      return;
    }
    const ids = Array.isArray(value) ? batchRequestIds(value) : [];
    if (ids.length === 0) answer(checked.answer);
    const { error } = checked.answer as { error: { code: number; message: string } };
    for (const id of ids) answer(errorAnswer(id, error.code, error.message));
  };

  const tooLong = (): void => {
    answer(
      errorAnswer(
        null,
        INVALID_REQUEST,
        `Invalid Request: a message longer than ${MAX_LINE_BYTES} bytes; it was skipped`,
      ),
    );
  };

  /** Reading is paused: lines of a chunk already read wait in `held` until resume. */
  let paused = false;
  let held: Buffer | undefined;

  const ondata = (chunk: Buffer): void => {
    let start = 0;
    for (;;) {
      if (paused || closed) {
        held = start < chunk.length ? chunk.subarray(start) : undefined;
        return;
      }
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      if (skipping) {
        skipping = false;
        continue;
      }
      if (partialBytes + piece.length > MAX_LINE_BYTES) {
        partial = [];
        partialBytes = 0;
        tooLong();
        continue;
      }
      const line = partial.length === 0 ? piece : Buffer.concat([...partial, piece]);
      partial = [];
      partialBytes = 0;
      handleLine(line);
    }
    if (start >= chunk.length || skipping) return;
    const rest = chunk.subarray(start);
    if (partialBytes + rest.length > MAX_LINE_BYTES) {
      partial = [];
      partialBytes = 0;
      skipping = true;
      tooLong();
      return;
    }
    partial.push(rest);
    partialBytes += rest.length;
  };

  const close = (): void => {
    if (closed) return;
    closed = true;
    input.off('data', ondata);
    input.pause();
    options.onclose();
  };

  input.on('data', ondata);
  input.once('end', close);
  input.once('close', close);
  input.on('error', (error) => {
    options.onwarning(`stdin: ${error.message}`);
    close();
  });
  // EPIPE: the client closed its end of stdout. It is gone.
  output.on('error', (error) => {
    if ((error as NodeJS.ErrnoException).code !== 'EPIPE') {
      options.onwarning(`stdout: ${error.message}`);
    }
    close();
  });

  return {
    send,
    unwritten: () => output.writableLength,
    pause: () => {
      paused = true;
      input.pause();
    },
    resume: () => {
      if (closed || !paused) return;
      paused = false;
      const rest = held;
      held = undefined;
      if (rest !== undefined) ondata(rest);
      if (!paused && !closed) input.resume();
    },
    onDrain: (listener) => output.once('drain', listener),
    close,
  };
}
