// The JSON-RPC envelope as `grove bridge` checks it, without the MCP SDK (whose schemas take as
// long to load as a whole small server, and a bridge forwarding to the host needs none of them):
// which kind a message is, and why a line from the client is not a message the MCP SDK would take —
// answered with a JSON-RPC error instead of being dropped, so the client never waits for a
// timeout. The checks mirror the SDK's envelope schemas (strict members, integer or string ids,
// object params); what a message says inside `params` or `result` is the upstream's to judge.
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';

export type { JSONRPCMessage, RequestId };

/** JSON-RPC error codes the bridge answers with. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** A message with a method and an id: it wants an answer. */
export interface Request {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Record<string, unknown>;
}

/** What a line from the client turned out to be. */
export type Checked =
  | { ok: true; message: JSONRPCMessage }
  /** Not a message: answer `answer` (an error for `answer.id`, null when none could be read). */
  | { ok: false; answer: JSONRPCMessage };

const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);
const RESULT_MEMBERS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_MEMBERS = new Set(['jsonrpc', 'id', 'error']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isId = (value: unknown): value is RequestId =>
  typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));

/** A JSON-RPC error answer; `id` null when the message's own id could not be read. */
export function errorAnswer(id: RequestId | null, code: number, message: string): JSONRPCMessage {
  // The SDK's type has no null id; on the wire JSON-RPC requires one for unreadable requests.
  return { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage;
}

export const isRequest = (message: JSONRPCMessage): message is JSONRPCMessage & Request =>
  'method' in message && 'id' in message && message.id !== undefined;

export const isNotification = (message: JSONRPCMessage): boolean =>
  'method' in message && !('id' in message);

/** A result or an error answer (to a request of the other side). */
export const isAnswer = (
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id?: RequestId; result?: unknown; error?: unknown } =>
  'result' in message || 'error' in message;

/** The method of a request or notification, else undefined. */
export const methodOf = (message: JSONRPCMessage): string | undefined =>
  'method' in message && typeof message.method === 'string' ? message.method : undefined;

/** The id of a request or answer, else undefined. */
export const idOf = (message: JSONRPCMessage): RequestId | undefined =>
  'id' in message && isId(message.id) ? message.id : undefined;

/** Checks one parsed line from the client. */
export function checkMessage(value: unknown): Checked {
  if (Array.isArray(value)) {
    // One error per request in the batch, so each of the client's waits ends.
    return {
      ok: false,
      answer: errorAnswer(
        null,
        INVALID_REQUEST,
        'Invalid Request: JSON-RPC batches are not supported over stdio; send one message per line',
      ),
    };
  }
  if (!isObject(value)) {
    return {
      ok: false,
      answer: errorAnswer(null, INVALID_REQUEST, 'Invalid Request: not a JSON-RPC message object'),
    };
  }
  const id = isId(value.id) ? value.id : null;
  const refuse = (code: number, message: string): Checked => ({
    ok: false,
    answer: errorAnswer(id, code, message),
  });
  if (value.jsonrpc !== '2.0')
    return refuse(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"');
  if ('id' in value && !isId(value.id)) {
    return refuse(INVALID_REQUEST, 'Invalid Request: id must be a string or an integer');
  }
  const members =
    'method' in value ? REQUEST_MEMBERS : 'error' in value ? ERROR_MEMBERS : RESULT_MEMBERS;
  const unknown = Object.keys(value).find((key) => !members.has(key));
  if (unknown !== undefined) {
    return refuse(INVALID_REQUEST, `Invalid Request: unknown member ${JSON.stringify(unknown)}`);
  }
  if ('method' in value) {
    if (typeof value.method !== 'string') {
      return refuse(INVALID_REQUEST, 'Invalid Request: method must be a string');
    }
    if ('params' in value) {
      if (!isObject(value.params)) {
        return refuse(INVALID_PARAMS, `Invalid params: ${value.method} takes an object as params`);
      }
      const meta = value.params._meta;
      if (meta !== undefined && !isObject(meta)) {
        return refuse(INVALID_PARAMS, 'Invalid params: params._meta must be an object');
      }
    }
    return { ok: true, message: value as unknown as JSONRPCMessage };
  }
  if ('error' in value) {
    const error = value.error;
    if (!isObject(error) || !Number.isInteger(error.code) || typeof error.message !== 'string') {
      return refuse(
        INVALID_REQUEST,
        'Invalid Request: error must have an integer code and a message',
      );
    }
    return { ok: true, message: value as unknown as JSONRPCMessage };
  }
  if (!('result' in value) || id === null || !isObject(value.result)) {
    return refuse(
      INVALID_REQUEST,
      'Invalid Request: a message needs a method (request, notification) or an id and a result object (answer)',
    );
  }
  return { ok: true, message: value as unknown as JSONRPCMessage };
}

/** The ids of the requests in a batch the client sent, to answer each. */
export function batchRequestIds(batch: unknown[]): RequestId[] {
  return batch.flatMap((entry) =>
    isObject(entry) && typeof entry.method === 'string' && isId(entry.id) ? [entry.id] : [],
  );
}
