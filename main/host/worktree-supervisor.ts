// Supervises one worktree process: starts it, stops it, and keeps the worktree's ServerStatus
// true. Health is a ping every 250 ms answered by the process's event loop: a late answer (over a
// second) is reported as busy, not punished — slow work is bounded and runs off that loop, so only
// a silence far longer than any bounded operation (HANG_AFTER_MS) means hung. The pong also says
// how long the process's file layer has had a call pending; stuck for TOOL_LAYER_HANG_AFTER_MS
// means its tools no longer answer even though its loop does. A hung or crashed process is marked
// `error` (with when it comes back) and restarted on the same port with exponential backoff capped
// at a minute — forever, while the user wants it running. A process that cannot serve its worktree
// at all (directory gone) says so (`fatal`) and is not restarted. It also relays what the process
// reports about its clients and tool calls.
import type { Logger } from '../platform/log.ts';
import type {
  ActivityEntry,
  ClientInfo,
  RunningCall,
  RunningTask,
  ServerStatus,
} from '../../shared/model.ts';
import type { DecisionRequest } from '../../shared/decisions.ts';
import type { ReconcileState } from '../../shared/reconcile.ts';
import type { UndoMarkResult } from '../../shared/reconcile-results.ts';
import { UserError, type UserErrorCode } from '../platform/errors.ts';
import type { HostToWorktree } from '../../shared/worktree-protocol.ts';
import { WorktreeToHostSchema } from '../../shared/worktree-to-host.ts';
import type { WorktreeLauncher, WorktreeProcessHandle } from './worktree-launcher.ts';

export interface SupervisorOptions {
  root: string;
  port: number;
  token: string;
  requireToken: boolean;
  launcher: WorktreeLauncher;
  /** Called on every status change. */
  onStatus(status: ServerStatus): void;
  /** Called when the process had to listen on another port than the one requested. */
  onPortMoved(port: number, requestedPort: number): void;
  /**
   * The ports a start never moves to (those the host's other worktrees have or remember), asked
   * at every start.
   */
  avoidPorts?: () => readonly number[];
  /** The clients list; `healthChecks`: clients that made no call dropped from it since the last. */
  onClients?(clients: ClientInfo[], healthChecks: number): void;
  onActivity?(entries: ActivityEntry[]): void;
  onRunningCalls?(calls: RunningCall[]): void;
  /** The just tasks running now. */
  onRunningTasks?(tasks: RunningTask[]): void;
  onReconcileState?(state: ReconcileState): void;
  /** The base branch for reconciliation (undefined: the process picks the repo's default). */
  reconcileBase?: string;
  /** Offer the just task tools (list_just_tasks, run_just_task); default off. */
  justTasks?: boolean;
  startTimeoutMs?: number;
  /** Overrides SLOW_START_MS. */
  slowStartMs?: number;
  stopTimeoutMs?: number;
  /** Health check interval (default 250 ms) and the silence that means hung (HANG_AFTER_MS). */
  pingIntervalMs?: number;
  hangAfterMs?: number;
  /** Overrides TOOL_LAYER_HANG_AFTER_MS. */
  toolLayerHangAfterMs?: number;
  /** Overrides RESTART_DELAYS_MS (tests). */
  restartDelaysMs?: readonly number[];
  /**
   * Where the supervisor says why it killed or restarts the process, and where the process's own
   * log records go (scoped to this worktree by the host).
   */
  log?: Logger;
}

/**
 * Restart delays after consecutive unexpected exits; the last one repeats forever. The supervisor
 * never gives up on a server the user wants running.
 */
export const RESTART_DELAYS_MS = [100, 500, 1000, 2000, 4000, 8000, 16_000, 32_000, 60_000];
/** A health check answered later than this is shown as busy. */
export const BUSY_AFTER_MS = 1_000;
/** No answer to the health check for this long means hung (no bounded operation takes as long). */
export const HANG_AFTER_MS = 30_000;
/** A file-layer call pending this long means the tools hang even if the event loop answers. */
export const TOOL_LAYER_HANG_AFTER_MS = 60_000;
/** A start slower than this says what it waits for (status detail, log). */
export const SLOW_START_MS = 5_000;
/**
 * How long the host waits for the answer to a decision request: reading and checking a spec of
 * MAX_SPEC_BYTES and a log of a MiB takes well under a second; a process busy far longer than
 * that is reported as not answering (its health check says more).
 */
export const DECISION_ANSWER_TIMEOUT_MS = 60_000;
/** The codes a refusal from the process may carry (anything else is reported as invalid input). */
const USER_ERROR_CODES: readonly UserErrorCode[] = [
  'invalid-argument',
  'not-found',
  'refused',
  'too-large',
  'busy',
  'timed-out',
  'cancelled',
  'unavailable',
];

/** A request sent to the process and not answered yet. */
interface PendingRequest {
  handle: WorktreeProcessHandle;
  resolve(result: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | undefined;
  /** Its error when the process exits first. */
  stoppedMessage: string;
}

/** A process that ran this long without crashing resets the backoff. */
const STABLE_AFTER_MS = 30_000;

export class WorktreeSupervisor {
  private readonly options: SupervisorOptions;
  private current: WorktreeProcessHandle | undefined;
  private statusValue: ServerStatus = { state: 'stopped' };
  /** True while the user wants this server running (Start pressed, autostart). */
  private wanted = false;
  private pendingStart: Promise<void> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private consecutiveFailures = 0;
  private startedAt = 0;
  private healthTimer: NodeJS.Timeout | undefined;
  private lastPongAt = 0;
  private toolLayerPendingMs = 0;
  private pingId = 0;
  private requestId = 0;
  /** Requests to the process awaiting their answer (undoMark, decisionRequest), by id. */
  private readonly pendingRequests = new Map<number, PendingRequest>();
  /** Why the supervisor killed the current process, so its exit is reported with that reason. */
  private killReason: string | undefined;

  constructor(options: SupervisorOptions) {
    this.options = options;
  }

  get status(): ServerStatus {
    return this.statusValue;
  }

  get port(): number {
    return this.options.port;
  }

  get pid(): number | undefined {
    return this.current?.pid;
  }

  /** Updates the token or its requirement; a running process applies it to the next request. */
  setAccess(token: string, requireToken: boolean): void {
    this.options.token = token;
    this.options.requireToken = requireToken;
    this.current?.send({ type: 'set-token', token, requireToken });
  }

  /** Changes the reconciliation base of the running process and of later starts. */
  setReconcileBase(base: string | undefined): void {
    this.options.reconcileBase = base;
    if (base !== undefined) this.current?.send({ type: 'set-reconcile-base', base });
  }

  /** Whether the just task tools are on (in the running process and later starts). */
  get justTasks(): boolean {
    return this.options.justTasks === true;
  }

  /** Turns the just task tools on or off in the running process and in later starts. */
  setJustTasks(enabled: boolean): void {
    if (this.options.justTasks === enabled) return;
    this.options.justTasks = enabled;
    this.current?.send({ type: 'set-just-tasks', enabled });
  }

  /** Asks the running process to stop one of its just tasks now. */
  stopTask(runId: string): void {
    this.current?.send({ type: 'stop-task', runId });
  }

  /** Asks the running process to end one of its tool calls now. */
  cancelCall(callId: string): void {
    this.current?.send({ type: 'cancel-call', callId });
  }

  /**
   * Asks the running process to undo its last mark_reconciled (`markId`); rejects with the
   * process's reason when it refuses, or when it is not running or exits before answering.
   */
  undoMark(markId: string): Promise<UndoMarkResult> {
    return this.request(
      (requestId) => ({ type: 'undo-mark', requestId, markId }),
      'the server is not running: start it to undo the mark',
      'the server stopped before it answered',
    ) as Promise<UndoMarkResult>;
  }

  /**
   * Sends a decision request to the running process; resolves with its result, rejects with its
   * refusal (a UserError with the process's code), or when the process is not running, stops
   * before answering, or does not answer within `timeoutMs`.
   */
  decisionRequest(
    request: DecisionRequest,
    timeoutMs = DECISION_ANSWER_TIMEOUT_MS,
  ): Promise<unknown> {
    return this.request(
      (requestId) => ({ type: 'decision-request', requestId, request }),
      'the server of this worktree is not running: start it on the Server tab',
      'the server stopped before answering (list the decisions again to see what was written)',
      {
        ms: timeoutMs,
        message:
          `the server did not answer within ${timeoutMs / 1000} s; it may still be working ` +
          '(list the decisions again to see what was written)',
      },
    );
  }

  /**
   * One request to the running process, settled by its answer with the same `requestId`
   * (settleRequest), by its exit (`stoppedMessage`) or by `timeout`.
   */
  private request(
    message: (requestId: number) => HostToWorktree,
    notRunningMessage: string,
    stoppedMessage: string,
    timeout?: { ms: number; message: string },
  ): Promise<unknown> {
    const handle = this.current;
    if (!handle || this.statusValue.state !== 'running') {
      return Promise.reject(new UserError(notRunningMessage, { code: 'unavailable' }));
    }
    const requestId = ++this.requestId;
    return new Promise((resolve, reject) => {
      const timer =
        timeout === undefined
          ? undefined
          : setTimeout(() => {
              this.pendingRequests.delete(requestId);
              reject(new UserError(timeout.message, { code: 'timed-out' }));
            }, timeout.ms);
      this.pendingRequests.set(requestId, { handle, resolve, reject, timer, stoppedMessage });
      handle.send(message(requestId));
    });
  }

  /** An answer settles its request (if still waited for, and from the process it went to). */
  private settleRequest(
    handle: WorktreeProcessHandle,
    requestId: number,
    outcome: { ok: true; result: unknown } | { ok: false; error: Error },
  ): void {
    const pending = this.pendingRequests.get(requestId);
    if (!pending || pending.handle !== handle) return;
    this.pendingRequests.delete(requestId);
    clearTimeout(pending.timer);
    if (outcome.ok) pending.resolve(outcome.result);
    else pending.reject(outcome.error);
  }

  /** Ends the requests `handle` (a process that exited) can no longer answer. */
  private failRequests(handle: WorktreeProcessHandle): void {
    for (const [id, pending] of this.pendingRequests) {
      if (pending.handle !== handle) continue;
      this.pendingRequests.delete(id);
      clearTimeout(pending.timer);
      pending.reject(new UserError(pending.stoppedMessage, { code: 'unavailable' }));
    }
  }

  /** Sets the port used from the next start on. */
  setPort(port: number): void {
    this.options.port = port;
  }

  private setStatus(status: ServerStatus): void {
    this.statusValue = status;
    this.options.onStatus(status);
  }

  /** Starts the server; resolves once it is running or has failed (the status says which). */
  start(): Promise<void> {
    this.wanted = true;
    this.consecutiveFailures = 0;
    clearTimeout(this.restartTimer);
    if (this.statusValue.state === 'running') return Promise.resolve();
    return this.launch();
  }

  private launch(): Promise<void> {
    if (this.pendingStart) return this.pendingStart;
    this.setStatus({ state: 'starting' });
    const handle = this.options.launcher.launch();
    this.current = handle;
    this.startedAt = Date.now();
    /** What this start waits for, as the process said it ('waiting'). */
    let waitingFor: string | undefined;
    let heardFrom = false;
    this.pendingStart = new Promise<void>((resolve) => {
      const settle = (): void => {
        clearTimeout(timer);
        clearTimeout(slowTimer);
        this.pendingStart = undefined;
        resolve();
      };
      // A slow start says what it waits for: in the status (the window, --json events) and the log.
      const startedAt = Date.now();
      const slowTimer = setTimeout(() => {
        if (handle !== this.current || this.statusValue.state !== 'starting') return;
        const detail =
          waitingFor ??
          (heardFrom
            ? `waiting for the server process (pid ${handle.pid}) to listen on port ${this.options.port}`
            : `waiting for the server process (pid ${handle.pid}) to load`);
        this.setStatus({ state: 'starting', detail });
        this.options.log?.warn(
          `server slow to start (${Math.round((Date.now() - startedAt) / 1000)} s): ${detail}`,
        );
      }, this.options.slowStartMs ?? SLOW_START_MS);
      const timeoutMs = this.options.startTimeoutMs ?? 15_000;
      const timer = setTimeout(() => {
        this.killReason = `server did not start within ${timeoutMs} ms`;
        this.setStatus({ state: 'error', message: this.killReason });
        handle.kill();
        settle();
      }, timeoutMs);

      handle.onMessage((raw) => {
        const parsed = WorktreeToHostSchema.safeParse(raw);
        if (!parsed.success || handle !== this.current) return;
        const message = parsed.data;
        heardFrom = true;
        if (message.type === 'waiting') {
          waitingFor = message.detail;
          this.options.log?.info(message.detail);
          if (this.statusValue.state === 'starting') {
            this.setStatus({ state: 'starting', detail: message.detail });
          }
        } else if (message.type === 'listening') {
          if (message.requestedPort !== null) {
            this.options.port = message.port;
            this.options.onPortMoved(message.port, message.requestedPort);
          }
          this.setStatus({ state: 'running', port: message.port });
          this.startHealthChecks(handle);
          settle();
        } else if (message.type === 'pong') {
          this.lastPongAt = Date.now();
          this.toolLayerPendingMs = message.toolLayerPendingMs ?? 0;
          if (this.statusValue.state === 'running' && this.statusValue.busySinceMs !== undefined) {
            this.setStatus({ state: 'running', port: this.statusValue.port });
          }
        } else if (message.type === 'clients') {
          this.options.onClients?.(message.clients, message.healthChecks ?? 0);
        } else if (message.type === 'activity') {
          this.options.onActivity?.(message.entries);
        } else if (message.type === 'running-calls') {
          this.options.onRunningCalls?.(message.calls);
        } else if (message.type === 'running-tasks') {
          this.options.onRunningTasks?.(message.tasks);
        } else if (message.type === 'reconcile-state') {
          this.options.onReconcileState?.(message.state);
        } else if (message.type === 'undo-mark-result') {
          this.settleRequest(
            handle,
            message.requestId,
            message.result
              ? { ok: true, result: message.result }
              : { ok: false, error: new UserError(message.error ?? 'the undo failed') },
          );
        } else if (message.type === 'decision-answer') {
          const code = USER_ERROR_CODES.find((known) => known === message.code);
          this.settleRequest(
            handle,
            message.requestId,
            message.ok
              ? { ok: true, result: message.result }
              : {
                  ok: false,
                  error:
                    code === undefined
                      ? new Error(`the server failed: ${message.message ?? 'no reason given'}`)
                      : new UserError(message.message ?? 'refused', { code }),
                },
          );
        } else if (message.type === 'log') {
          this.options.log?.forward(message.record);
        } else if (message.type === 'fatal') {
          // The process cannot serve this worktree (directory gone, no free port): do not retry.
          this.wanted = false;
          this.setStatus({ state: 'error', message: message.message });
          settle();
        }
      });

      handle.onExit((code, signal) => {
        this.failRequests(handle);
        if (handle !== this.current) return;
        this.current = undefined;
        this.stopHealthChecks();
        settle();
        if (!this.wanted) {
          if (this.statusValue.state !== 'error') this.setStatus({ state: 'stopped' });
          return;
        }
        const how = signal ? `signal ${signal}` : `code ${code}`;
        const message = this.killReason ?? `server process exited unexpectedly (${how})`;
        this.killReason = undefined;
        this.scheduleRestart(message);
      });
    });
    handle.send({
      type: 'start',
      root: this.options.root,
      port: this.options.port,
      avoidPorts: [...(this.options.avoidPorts?.() ?? [])],
      token: this.options.token,
      requireToken: this.options.requireToken,
    });
    if (this.options.reconcileBase !== undefined) {
      handle.send({ type: 'set-reconcile-base', base: this.options.reconcileBase });
    }
    if (this.options.justTasks === true) handle.send({ type: 'set-just-tasks', enabled: true });
    return this.pendingStart;
  }

  private get hangAfterMs(): number {
    return this.options.hangAfterMs ?? HANG_AFTER_MS;
  }

  private startHealthChecks(handle: WorktreeProcessHandle): void {
    this.stopHealthChecks();
    const intervalMs = this.options.pingIntervalMs ?? 250;
    this.lastPongAt = Date.now();
    let lastTickAt = Date.now();
    this.healthTimer = setInterval(() => {
      if (handle !== this.current) return this.stopHealthChecks();
      const now = Date.now();
      // If the host itself was stalled (this timer fired very late), the missing pongs say
      // nothing about the worktree process: start counting again.
      if (now - lastTickAt > intervalMs + this.hangAfterMs / 2) this.lastPongAt = now;
      lastTickAt = now;
      const silentMs = now - this.lastPongAt;
      const toolLayerLimitMs = this.options.toolLayerHangAfterMs ?? TOOL_LAYER_HANG_AFTER_MS;
      if (silentMs > this.hangAfterMs) {
        // Hung: its event loop no longer runs. Kill it; the exit handler restarts it.
        this.killFor(
          handle,
          `server stopped answering its health check for ${Math.round(silentMs / 1000)} s; restarting it`,
        );
        return;
      }
      if (this.toolLayerPendingMs > toolLayerLimitMs) {
        this.killFor(
          handle,
          `server's file layer stopped answering (a file-system call pending for ` +
            `${Math.round(this.toolLayerPendingMs / 1000)} s), so its tools hang; restarting it`,
        );
        return;
      }
      if (
        silentMs > BUSY_AFTER_MS &&
        this.statusValue.state === 'running' &&
        this.statusValue.busySinceMs === undefined
      ) {
        this.setStatus({ ...this.statusValue, busySinceMs: this.lastPongAt });
      }
      handle.send({ type: 'ping', id: ++this.pingId });
    }, intervalMs);
    this.healthTimer.unref();
  }

  private killFor(handle: WorktreeProcessHandle, reason: string): void {
    this.stopHealthChecks();
    this.killReason = reason;
    this.options.log?.warn(reason);
    handle.kill();
  }

  private stopHealthChecks(): void {
    clearInterval(this.healthTimer);
    this.healthTimer = undefined;
  }

  /** Shows `message` with when the server comes back, and restarts it then (same port). */
  private scheduleRestart(message: string): void {
    if (Date.now() - this.startedAt > STABLE_AFTER_MS) this.consecutiveFailures = 0;
    const delays = this.options.restartDelaysMs ?? RESTART_DELAYS_MS;
    const delay = delays[Math.min(this.consecutiveFailures, delays.length - 1)] ?? 60_000;
    this.consecutiveFailures++;
    this.setStatus({ state: 'error', message, restartAt: Date.now() + delay });
    this.options.log?.warn(`${message}; restarting in ${formatDelay(delay)}`);
    this.restartTimer = setTimeout(() => {
      if (this.wanted && !this.current) void this.launch();
    }, delay);
  }

  /** Stops the server and waits for its process to exit. */
  async stop(): Promise<void> {
    this.wanted = false;
    clearTimeout(this.restartTimer);
    this.stopHealthChecks();
    const handle = this.current;
    if (!handle) {
      if (this.statusValue.state !== 'stopped') this.setStatus({ state: 'stopped' });
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => handle.kill(), this.options.stopTimeoutMs ?? 5000);
      handle.onExit(() => {
        clearTimeout(timer);
        resolve();
      });
      handle.send({ type: 'shutdown' });
    });
    if (this.statusValue.state !== 'stopped') this.setStatus({ state: 'stopped' });
  }
}

function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
