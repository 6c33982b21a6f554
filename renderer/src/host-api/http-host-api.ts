// The headless transport of HostApi: commands as `POST /api/<command>` with a bearer token, events
// from the SSE stream `GET /api/events?token=T`. Every response and event is parsed with the shared
// zod schemas. The event stream reconnects on its own (with backoff), and each (re)connection starts
// with a full snapshot, so subscribers never have to resynchronise by hand.
import {
  HostEventSchema,
  commandMethods,
  hostCommands,
  type HostCommandMethods,
  type HostApi,
  type HostCommandInput,
  type HostCommandName,
  type HostCommandOutput,
  type HostEvent,
} from '../../../shared/host-api.ts';
import type { ConnectionListener, ConnectionState, ConnectionSource } from './connection.ts';

/** A command the host refused or could not answer; `status` is the HTTP status (0: no answer). */
export class HostApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = 'HostApiError';
    this.status = status;
  }
}

export interface HttpHostApiOptions {
  /** Origin (and optional path prefix) of the headless host, e.g. `http://127.0.0.1:4000/`. */
  baseUrl: string;
  /** The session token printed by `grove serve` (the page URL's `?token=`). */
  token: string;
  /** How long a command may take before it is abandoned. */
  commandTimeoutMs?: number;
  /** Reconnection delays of the event stream: first, and ceiling (doubling in between). */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

const DEFAULT_COMMAND_TIMEOUT_MS = 15_000;
const DEFAULT_RECONNECT_MIN_MS = 500;
const DEFAULT_RECONNECT_MAX_MS = 10_000;

/** Reads the token from a page URL's query (`?token=...`); null when absent or empty. */
export function tokenFromSearch(search: string): string | null {
  const token = new URLSearchParams(search).get('token');
  return token ? token : null;
}

// The named command methods (startServer, getSnapshot...) are built from the command table in the
// constructor; this interface merges their types into the class.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface HttpHostApi extends HostCommandMethods {}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class HttpHostApi implements HostApi, ConnectionSource {
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #commandTimeoutMs: number;
  readonly #reconnectMinMs: number;
  readonly #reconnectMaxMs: number;
  readonly #connectionListeners = new Set<ConnectionListener>();
  #connection: ConnectionState = { state: 'connecting' };
  #openStreams = 0;

  constructor(options: HttpHostApiOptions) {
    this.#baseUrl = options.baseUrl;
    this.#token = options.token;
    this.#commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.#reconnectMinMs = options.reconnectMinMs ?? DEFAULT_RECONNECT_MIN_MS;
    this.#reconnectMaxMs = options.reconnectMaxMs ?? DEFAULT_RECONNECT_MAX_MS;
    Object.assign(
      this,
      commandMethods((name, input) => this.#call(name, input as never)),
    );
  }

  /** One EventSource per subscriber, so each one starts with its own snapshot. */
  onEvent(listener: (event: HostEvent) => void): () => void {
    let closed = false;
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | null = null;
    let delay = this.#reconnectMinMs;
    this.#openStreams += 1;

    const open = (): void => {
      const url = new URL('api/events', this.#baseUrl);
      url.searchParams.set('token', this.#token);
      source = new EventSource(url);
      source.onmessage = (message: MessageEvent<string>) => {
        const event = parseEvent(message.data);
        if (!event) return;
        if (event.type === 'snapshot') {
          delay = this.#reconnectMinMs;
          this.#setConnection({ state: 'open' });
        }
        listener(event);
      };
      source.onerror = () => {
        // Close and reconnect ourselves: the browser gives up for good on an HTTP error status,
        // and its own retry has no backoff.
        source?.close();
        source = null;
        if (!closed) void retry();
      };
    };

    const retry = async (): Promise<void> => {
      // Ask the host why, so the UI can say something better than "disconnected".
      let reason: string;
      try {
        await this.#call('getSnapshot', {});
        reason = 'The event stream was interrupted.';
      } catch (error) {
        if (closed) return;
        if (error instanceof HostApiError && (error.status === 401 || error.status === 403)) {
          // The token will not get better by waiting: this page's address is stale.
          this.#setConnection({
            state: 'failed',
            message: `The Grove host refused this page's token (${error.message.replace(/\.$/, '')}). Open the address printed by grove serve again.`,
          });
          return;
        }
        reason = errorMessage(error);
      }
      if (closed) return;
      const wait = delay;
      delay = Math.min(delay * 2, this.#reconnectMaxMs);
      this.#setConnection({ state: 'reconnecting', message: reason, retryAt: Date.now() + wait });
      timer = setTimeout(() => {
        timer = null;
        if (!closed) open();
      }, wait);
    };

    open();
    return () => {
      if (closed) return;
      closed = true;
      source?.close();
      source = null;
      if (timer !== null) clearTimeout(timer);
      this.#openStreams -= 1;
      if (this.#openStreams === 0) this.#setConnection({ state: 'connecting' });
    };
  }

  connectionState(): ConnectionState {
    return this.#connection;
  }

  onConnectionChange(listener: ConnectionListener): () => void {
    this.#connectionListeners.add(listener);
    return () => this.#connectionListeners.delete(listener);
  }

  #setConnection(next: ConnectionState): void {
    this.#connection = next;
    for (const listener of this.#connectionListeners) listener(next);
  }

  async #call<N extends HostCommandName>(
    name: N,
    input: HostCommandInput<N>,
  ): Promise<HostCommandOutput<N>> {
    let response: Response;
    try {
      response = await fetch(new URL(`api/${name}`, this.#baseUrl), {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Bearer ${this.#token}`,
        },
        body: JSON.stringify(input),
        signal: AbortSignal.timeout(this.#commandTimeoutMs),
      });
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
      throw new HostApiError(
        timedOut
          ? `The Grove host did not answer ${name} in time.`
          : 'Cannot reach the Grove host.',
        0,
      );
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      const message =
        isErrorBody(body) && body.error
          ? body.error
          : `${name} failed (HTTP ${response.status} ${response.statusText}).`;
      throw new HostApiError(message, response.status);
    }
    const parsed = hostCommands[name].output.safeParse(body);
    if (!parsed.success) {
      throw new HostApiError(
        `The Grove host sent an unexpected answer to ${name}.`,
        response.status,
      );
    }
    return parsed.data as HostCommandOutput<N>;
  }
}

/** The HTTP transport for the page the host served: same origin, token from the page URL. */
export function createHttpHostApiFromLocation(location: Location): HttpHostApi | null {
  const token = tokenFromSearch(location.search);
  if (!token) return null;
  return new HttpHostApi({ baseUrl: new URL('/', location.href).href, token });
}

function parseEvent(data: string): HostEvent | null {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    console.error('Grove: ignoring an event that is not JSON');
    return null;
  }
  const parsed = HostEventSchema.safeParse(json);
  if (!parsed.success) {
    console.error('Grove: ignoring an event that does not match the contract', parsed.error);
    return null;
  }
  return parsed.data;
}

function isErrorBody(body: unknown): body is { error: string } {
  return (
    typeof body === 'object' &&
    body !== null &&
    'error' in body &&
    typeof (body as { error: unknown }).error === 'string'
  );
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
