// `grove bridge` forwarding to the running host's server for the worktree: a Streamable HTTP
// client of that server's `/mcp` with the worktree's token, so the window shows the bridge's client
// and its calls like any other. Written on node:http rather than the SDK's client transport: a
// bridge in front of a host must answer its client's `initialize` as fast as a bare stdio server,
// and the SDK (its schemas) and fetch (undici) each take longer to load than that whole answer.
// It speaks what the SDK's StreamableHTTPClientTransport speaks for a pass-through: one POST per
// message (an answer as JSON or an event stream), the session id from `initialize`, the protocol
// version headers (connection-level after `initialize`; per request from a 2026-07-28 envelope),
// the standalone GET stream after `notifications/initialized`, DELETE on close.
//
// What the host says is told apart from the host being gone: an HTTP error status (a refusal: a
// full session, a body too large) answers that request with an error; a stream cut before its
// answer is asked about at /healthz. Only a host that does not answer /healthz, forgets the
// session (404) or refuses the token (403) is lost.
//
// The token goes only where the host proved itself: every connection the bridge opens to the
// port is first asked `/healthz?challenge=` (find-host.ts), and one whose peer does not prove it
// holds the token is never given a request. So a host that stops mid-session, and another process
// that takes its port, gets nothing: the request fails, /healthz says the host is gone, and the
// bridge moves (to serving the worktree itself).
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  Agent,
  request as httpRequest,
  type ClientRequestArgs,
  type IncomingMessage,
} from 'node:http';
import { GROVE_VERSION } from '../platform/version.ts';
import { BRIDGE_HEADER } from '../mcp/client-events.ts';
import { hostAnswers, provePeer, type HostServer } from './find-host.ts';
import {
  errorAnswer,
  idOf,
  INTERNAL_ERROR,
  isAnswer,
  isRequest,
  methodOf,
  type JSONRPCMessage,
  type RequestId,
} from './json-rpc.ts';
import { UpstreamLost, type Upstream, type UpstreamHandlers } from './upstreams.ts';

/**
 * Most connections to the host at once: the bridge sends at most MAX_IN_FLIGHT requests at once
 * (bridge.ts), plus the standalone stream and notifications.
 */
const MAX_SOCKETS = 24;

/** The biggest answer or event taken from the host (its largest answers are a few MiB). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * How long a new connection waits for the host to prove itself before its request fails (and the
 * bridge asks whether the host is gone). Long: a busy host answers late, as it would the request.
 */
const PROOF_TIMEOUT_MS = 30_000;

/** How long closing waits for the host to end the session (the client is waiting for the exit). */
const CLOSE_WAIT_MS = 40;

/** The standalone stream is opened again after it ends, this long after. */
const STREAM_RETRY_MS = 500;

/** The `_meta` key of a 2026-07-28 request's protocol version (the SDK's PROTOCOL_VERSION_META_KEY). */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/** The body member the `Mcp-Name` header mirrors, per method (the SDK's MCP_NAME_HEADER_SOURCE). */
const MCP_NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/** An HTTP header value as the MCP spec encodes it: plain ASCII as is, else `=?base64?...?=`. */
export function encodeHeaderValue(value: string): string {
  const plain =
    value.length > 0 &&
    value === value.trim() &&
    !(value.startsWith('=?base64?') && value.endsWith('?=')) &&
    /^[\t\x20-\x7e]*$/.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** The per-request headers a 2026-07-28 request carries (its version claim is in `_meta`). */
function envelopeHeaders(message: JSONRPCMessage): Record<string, string> {
  if (!isRequest(message)) return {};
  const params = message.params as Record<string, unknown> | undefined;
  const meta = params?._meta as Record<string, unknown> | undefined;
  const version = meta?.[PROTOCOL_VERSION_META_KEY];
  if (typeof version !== 'string') return {};
  const headers: Record<string, string> = {
    'mcp-protocol-version': version,
    'mcp-method': message.method,
  };
  const field = Object.hasOwn(MCP_NAME_SOURCE, message.method)
    ? MCP_NAME_SOURCE[message.method]
    : undefined;
  const name = field === undefined ? undefined : params?.[field];
  if (typeof name === 'string') headers['mcp-name'] = encodeHeaderValue(name);
  return headers;
}

/** Reads a whole (bounded) body as text. */
function readBody(response: IncomingMessage, limit = MAX_ANSWER_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        response.destroy(new Error(`an answer larger than ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.once('error', reject);
    response.once('close', () => {
      if (!response.complete) reject(new Error('the answer was cut off'));
    });
  });
}

/**
 * Reads an event stream, calling `onevent` with each event's data (`message` events only) and
 * `onretry` with a `retry:` field. Resolves when the stream ends, rejects when it is cut.
 */
function readEvents(
  response: IncomingMessage,
  onevent: (data: string) => void,
  onretry: (ms: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    response.setEncoding('utf8');
    let buffer = '';
    let data: string[] = [];
    let dataBytes = 0;
    let event = '';
    const line = (text: string): void => {
      if (text === '') {
        if (data.length > 0 && (event === '' || event === 'message')) onevent(data.join('\n'));
        data = [];
        dataBytes = 0;
        event = '';
        return;
      }
      if (text.startsWith(':')) return;
      const colon = text.indexOf(':');
      const field = colon === -1 ? text : text.slice(0, colon);
      let value = colon === -1 ? '' : text.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') {
        data.push(value);
        dataBytes += value.length;
      } else if (field === 'event') event = value;
      else if (field === 'retry' && /^\d+$/.test(value)) onretry(Number(value));
    };
    response.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length + dataBytes > MAX_ANSWER_BYTES) {
        response.destroy(new Error(`an event larger than ${MAX_ANSWER_BYTES} bytes`));
        return;
      }
      let start = 0;
      for (;;) {
        const newline = buffer.indexOf('\n', start);
        if (newline === -1) break;
        line(buffer.slice(start, newline).replace(/\r$/, ''));
        start = newline + 1;
      }
      buffer = buffer.slice(start);
    });
    response.once('end', () => resolve());
    response.once('error', reject);
    response.once('close', () => {
      if (!response.complete) reject(new Error('the event stream was cut off'));
    });
  });
}

/** Connects to the running host's server for the worktree. */
export async function connectToHost(
  server: HostServer,
  handlers: UpstreamHandlers,
): Promise<Upstream> {
  const port = Number(server.url.port);
  const agent = new ProvingAgent(port, server.token, server.proven);
  const description = `the Grove host (${server.url.href})`;
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;
  let lost = false;
  let closing = false;
  /** The standalone stream's request, to end it on close. */
  let standalone: ReturnType<typeof httpRequest> | undefined;
  let retryMs = STREAM_RETRY_MS;
  /** Ids of initialize requests sent: their answers carry the session's protocol version. */
  const initializeIds = new Set<RequestId>();

  const lose = (reason: string): void => {
    if (lost || closing) return;
    lost = true;
    handlers.onlost(reason);
  };

  /**
   * Messages from the host for the client (what is not JSON is dropped: there is nothing to
   * answer). True when one of them answers the request `answering`.
   */
  const deliver = (text: string, answering?: RequestId): boolean => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return false;
    }
    let answered = false;
    const single = !Array.isArray(parsed);
    for (const message of (Array.isArray(parsed) ? parsed : [parsed]) as JSONRPCMessage[]) {
      if (typeof message !== 'object' || message === null) continue;
      const id = idOf(message);
      if (isAnswer(message) && id !== undefined) {
        if (id === answering) answered = true;
        if (initializeIds.delete(id)) {
          const result = (message as { result?: { protocolVersion?: unknown } }).result;
          if (typeof result?.protocolVersion === 'string') protocolVersion = result.protocolVersion;
        }
      }
      handlers.onmessage(message, single ? text : undefined);
    }
    return answered;
  };

  const headersFor = (extra: Record<string, string>): Record<string, string> => ({
    authorization: `Bearer ${server.token}`,
    'user-agent': `grove-bridge/${GROVE_VERSION}`,
    // The window lists the client behind the bridge as stdio, under its own name.
    [BRIDGE_HEADER]: '1',
    ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
    ...(protocolVersion === undefined ? {} : { 'mcp-protocol-version': protocolVersion }),
    ...extra,
  });

  /** One HTTP exchange; resolves with the response (its headers), rejects with no response. */
  const exchange = (
    method: 'GET' | 'POST' | 'DELETE',
    headers: Record<string, string>,
    body?: string,
  ): { done: Promise<IncomingMessage>; request: ReturnType<typeof httpRequest> } => {
    const request = httpRequest(server.url, { method, agent, headers });
    const done = new Promise<IncomingMessage>((resolve, reject) => {
      request.once('response', resolve);
      request.once('error', reject);
    });
    request.end(body);
    return { done, request };
  };

  /**
   * Whether the host is gone (it does not answer /healthz); when so, the upstream is lost for
   * `reason`. A host that answers only refused or cut one exchange: that is not its death.
   */
  const hostGone = async (reason: string): Promise<boolean> => {
    if (closing || lost) return true;
    if (await hostAnswers(port, server.token)) return false;
    lose(reason);
    return true;
  };

  const openStandaloneStream = (): void => {
    if (lost || closing || sessionId === undefined) return;
    const { done, request } = exchange('GET', headersFor({ accept: 'text/event-stream' }));
    standalone = request;
    void done
      .then(async (response) => {
        if (response.statusCode === 405) return void response.resume(); // the server has none
        if (response.statusCode === 404) return void lose('the Grove host restarted');
        if (response.statusCode !== 200) {
          response.resume();
          throw new Error(`HTTP ${response.statusCode}`);
        }
        await readEvents(response, deliver, (ms) => (retryMs = ms));
      })
      .catch((error: unknown) =>
        hostGone(`the Grove host stopped answering (${describeError(error)})`),
      )
      .then(() => {
        // The host ended or cut the stream and is still there: open it again.
        if (!lost && !closing) setTimeout(openStandaloneStream, retryMs).unref();
      });
  };

  /**
   * Reads the answer of a POST the host took. A request whose answer never came (its stream cut or
   * ended without it) gets an error from the bridge — unless the host is gone, when the bridge
   * deals with it as it moves.
   */
  const readAnswer = async (message: JSONRPCMessage, response: IncomingMessage): Promise<void> => {
    const id = isRequest(message) ? message.id : undefined;
    let answered = false;
    const take = (data: string): void => {
      if (deliver(data, id)) answered = true;
    };
    const type = (response.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    let cut: unknown;
    try {
      if (type === 'text/event-stream') await readEvents(response, take, (ms) => (retryMs = ms));
      else {
        const text = await readBody(response);
        if (text !== '') take(text);
      }
    } catch (error) {
      cut = error;
    }
    if (id === undefined || answered) return;
    const why =
      cut === undefined
        ? `the Grove host ended its answer without one (${type || 'no content type'})`
        : `the Grove host's answer was cut off (${describeError(cut)})`;
    if (await hostGone(`the Grove host stopped answering (${why})`)) return;
    handlers.onmessage(errorAnswer(id, INTERNAL_ERROR, why));
  };

  /**
   * While an `initialize` is on its way, other messages wait for its session id (a client that
   * does not wait for the answer would otherwise send them without one, and have them refused).
   */
  let initializing: Promise<unknown> | undefined;

  const send = async (message: JSONRPCMessage): Promise<void> => {
    if (lost) throw new UpstreamLost(`${description} is gone`, false);
    const isInitialize = methodOf(message) === 'initialize' && isRequest(message);
    if (isInitialize) {
      initializeIds.add(message.id);
      const sent = post(message, true);
      initializing = sent.catch(() => undefined);
      return sent;
    }
    while (initializing !== undefined) {
      const waited = initializing;
      await waited;
      if (initializing === waited) initializing = undefined;
    }
    return post(message, false);
  };

  const post = async (message: JSONRPCMessage, isInitialize: boolean): Promise<void> => {
    if (lost) throw new UpstreamLost(`${description} is gone`, false);
    const headers = headersFor({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...envelopeHeaders(message),
    });
    // A new session starts without the old one's id.
    if (isInitialize) delete headers['mcp-session-id'];
    const body = JSON.stringify(message);
    let response: IncomingMessage;
    for (let attempt = 0; ; attempt++) {
      const { done, request } = exchange('POST', headers, body);
      try {
        response = await done;
        break;
      } catch (error) {
        // A kept-alive socket the server closed as it was reused: the request never arrived.
        if (request.reusedSocket && errnoCode(error) === 'ECONNRESET' && attempt === 0) continue;
        if (!(await hostGone(`the Grove host stopped answering (${describeError(error)})`))) {
          throw new Error(`could not reach the Grove host: ${describeError(error)}`, {
            cause: error,
          });
        }
        // No HTTP response at all: refused, or a socket the dying server closed. A message the
        // server started on would have got its answer's headers first.
        throw new UpstreamLost(`${description} is gone`, false, error);
      }
    }
    const status = response.statusCode ?? 0;
    if (status === 404 || status === 403) {
      response.resume();
      // 404: the session is unknown to a server that restarted since it began. 403: the window
      // rotated the worktree's token; the database has the new one.
      const reason =
        status === 404
          ? 'the Grove host restarted'
          : "the Grove host refused this worktree's token (rotated?)";
      lose(reason);
      throw new UpstreamLost(reason, false);
    }
    if (status < 200 || status >= 300) {
      // A refusal (a body too large, a full session, a bad request): the host's own answer.
      const text = await readBody(response, 64 * 1024).catch(() => '');
      const id = isRequest(message) ? message.id : undefined;
      if (id !== undefined && text.includes(JSON.stringify(id)) && text.includes('"error"')) {
        deliver(text);
        return;
      }
      throw new Error(`the Grove host refused it: HTTP ${status} ${text.slice(0, 300)}`.trim());
    }
    if (isInitialize) {
      const header = response.headers['mcp-session-id'];
      if (typeof header === 'string') sessionId = header;
    }
    if (status === 202) {
      response.resume();
      if (methodOf(message) === 'notifications/initialized' && standalone === undefined) {
        openStandaloneStream();
      }
      return;
    }
    void readAnswer(message, response);
  };

  return {
    description,
    kind: 'host',
    send,
    async close() {
      closing = true;
      standalone?.destroy();
      // Ends the session on the host at once (the window stops listing the client) when it is up;
      // the client waits for the exit, so the answer is waited for only briefly (once sent, the
      // host ends the session whether or not the bridge is still there to read the answer).
      if (sessionId !== undefined && !lost) {
        const { done } = exchange('DELETE', headersFor({}));
        await Promise.race([
          done.then((response) => response.resume()).catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref()),
        ]);
      }
      lost = true;
      agent.destroy();
    },
  };
}

/**
 * The upstream's connections: keep-alive, and each one new given to a request only once its peer
 * proved it is the worktree's server (the first may be the one the host proved itself on when the
 * bridge found it).
 */
class ProvingAgent extends Agent {
  private readonly port: number;
  private readonly token: string;
  private proven: Socket | undefined;

  constructor(port: number, token: string, proven: Socket | undefined) {
    super({ keepAlive: true, maxSockets: MAX_SOCKETS });
    this.port = port;
    this.token = token;
    this.proven = proven;
  }

  // Node's agents take a connection from the callback when this returns none.
  override createConnection(
    _options: ClientRequestArgs,
    callback?: (error: Error | null, socket: Duplex) => void,
  ): undefined {
    const kept = this.proven;
    this.proven = undefined;
    if (kept !== undefined && !kept.destroyed && kept.readable && kept.writable) {
      kept.ref();
      callback?.(null, kept);
      return undefined;
    }
    kept?.destroy();
    void provePeer(this.port, this.token, PROOF_TIMEOUT_MS).then((check) => {
      if (check.kind === 'own') return callback?.(null, check.socket);
      const why =
        check.kind === 'other'
          ? `port ${this.port} is held by another server (${check.detail})`
          : check.kind === 'timeout'
            ? `no answer on port ${this.port}`
            : `nothing answers on port ${this.port}`;
      // A socket-less failure: the request never left, as when a connection is refused.
      callback?.(Object.assign(new Error(why), { code: 'ECONNREFUSED' }), undefined as never);
    });
    return undefined;
  }

  override destroy(): void {
    this.proven?.destroy();
    this.proven = undefined;
    super.destroy();
  }
}

/** The errno code somewhere in an error's cause chain. */
function errnoCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('E')) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
