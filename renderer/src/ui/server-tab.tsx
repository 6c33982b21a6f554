// The Server tab: status (with the error and a Retry), Start/Stop/Restart, the port (edited with
// setWorktreePort, which restarts a running server on it), the autostart and require-token
// switches, the running just tasks (with Stop), the two URLs, the token (hidden until revealed;
// copy; rotate) and, when the port moved, the note that offers the old one back.
import { useId, useState, type FormEvent } from 'react';
import { WORKTREE_PORT_MAX, WORKTREE_PORT_MIN } from '../../../shared/host-api.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import type { CommandError, ServerCommand } from '../store/host-store.ts';
import { CopyButton } from '../common/copy-button.tsx';
import { ServerStatusText } from './server-status.tsx';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { type useConnectionInfo } from './use-connection-info.ts';
import { ConfirmDialog } from '../common/confirm-dialog.tsx';
import { plural } from '../common/format.ts';
import { useNow } from '../common/use-now.ts';
import { connectedClientCount } from '../../../shared/clients.ts';
import { portOutcome, portProblem, type PortOutcome } from './port-setting.ts';
import { RunningTasks } from './running-tasks.tsx';
import { PortMovedNote } from './port-moved-note.tsx';

export interface ServerTabProps {
  worktree: WorktreeState;
  pending: ServerCommand | undefined;
  commandError: CommandError | undefined;
  live: boolean;
  connection: ReturnType<typeof useConnectionInfo>;
}

const PENDING_LABEL: Record<ServerCommand, string> = {
  start: 'Starting…',
  stop: 'Stopping…',
  restart: 'Restarting…',
};

export function ServerTab({ worktree, pending, commandError, live, connection }: ServerTabProps) {
  const store = useHostStore();
  const { status } = worktree;
  const idle = live && !pending;
  const canStart = idle && (status.state === 'stopped' || status.state === 'error');
  const canStop = idle && (status.state === 'running' || status.state === 'starting');
  const canRestart = idle && status.state === 'running';
  // Stop cuts the clients connected now: with any, the user is told how many and asked first.
  const clients = connectedClientCount(worktree.clients, useNow());
  const [confirmingStop, setConfirmingStop] = useState(false);

  return (
    <div className="stack">
      <section className="card" aria-label="Status">
        <div className="card__row">
          <div className="status-block">
            <ServerStatusText status={status} known={live} />
            {pending && <p className="muted">{PENDING_LABEL[pending]}</p>}
          </div>
          <div className="button-row">
            <button
              type="button"
              className="button button--primary"
              disabled={!canStart}
              onClick={() => void store.startServer(worktree.id)}
            >
              {status.state === 'error' ? 'Retry' : 'Start'}
            </button>
            <button
              type="button"
              className="button"
              disabled={!canStop}
              onClick={() =>
                clients > 0 ? setConfirmingStop(true) : void store.stopServer(worktree.id)
              }
            >
              Stop
            </button>
            {confirmingStop && (
              <ConfirmDialog
                title="Stop the server?"
                confirmLabel="Stop server"
                confirmDisabled={!canStop}
                onConfirm={() => {
                  setConfirmingStop(false);
                  void store.stopServer(worktree.id);
                }}
                onCancel={() => setConfirmingStop(false)}
              >
                <p>
                  {plural(clients, 'client is', 'clients are')} connected now: stopping cuts{' '}
                  {clients === 1 ? 'it' : 'them'} off until the server starts again.
                </p>
              </ConfirmDialog>
            )}
            <button
              type="button"
              className="button"
              disabled={!canRestart}
              onClick={() => void store.restartServer(worktree.id)}
            >
              Restart
            </button>
          </div>
        </div>
        <PortMovedNote key={worktree.id} worktree={worktree} live={live} where="server" />
        {commandError && (
          <p className="notice notice--error" role="alert">
            Could not {commandError.command} the server: {commandError.message}
          </p>
        )}
      </section>

      <Settings worktree={worktree} live={live} serverBusy={pending !== undefined} />

      <RunningTasks worktree={worktree} live={live} />

      <section className="card" aria-labelledby={`${worktree.id}-endpoints`}>
        <h3 className="card__title" id={`${worktree.id}-endpoints`}>
          Endpoints
        </h3>
        <dl className="urls">
          <div className="urls__row">
            <dt>SSE</dt>
            <dd>
              <code>{worktree.urls.sse}</code>
              <CopyButton value={worktree.urls.sse} label="Copy SSE URL" disabled={!live} />
            </dd>
          </div>
          <div className="urls__row">
            <dt>Streamable HTTP</dt>
            <dd>
              <code>{worktree.urls.mcp}</code>
              <CopyButton
                value={worktree.urls.mcp}
                label="Copy Streamable HTTP URL"
                disabled={!live}
              />
            </dd>
          </div>
          <TokenRow worktree={worktree} live={live} connection={connection} />
        </dl>
      </section>
    </div>
  );
}

function Settings({
  worktree,
  live,
  serverBusy,
}: {
  worktree: WorktreeState;
  live: boolean;
  /** A start, stop or restart is in flight. */
  serverBusy: boolean;
}) {
  const store = useHostStore();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const change = async (changes: Partial<WorktreeState['settings']>): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await store.commands.setWorktreeSettings({ worktreeId: worktree.id, ...changes });
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby={`${worktree.id}-settings`}>
      <h3 className="card__title" id={`${worktree.id}-settings`}>
        Settings
      </h3>
      <PortSetting worktree={worktree} live={live} serverBusy={serverBusy} />
      <Switch
        label="Start automatically"
        hint="Start this server when Grove starts."
        checked={worktree.settings.autostart}
        disabled={!live || busy}
        onChange={(autostart) => void change({ autostart })}
      />
      <Switch
        label="Require token"
        hint={
          worktree.settings.requireToken
            ? "On: a client must send this worktree's token. Turned off, any local program could call this server (Host and Origin checks still apply)."
            : 'Off: any local program can call this server (Host and Origin checks still apply). Turn it on to require the token.'
        }
        checked={worktree.settings.requireToken}
        disabled={!live || busy}
        onChange={(requireToken) => void change({ requireToken })}
      />
      {!worktree.settings.requireToken && (
        <p className="notice" role="note">
          The token is not required: every program on this machine can reach this worktree.
        </p>
      )}
      <Switch
        label="Allow just tasks"
        hint={
          'Offers list_just_tasks and run_just_task: any connected client may run any recipe of ' +
          "this worktree's justfile, with your user's rights. A recipe can change or delete files, " +
          'use the network and run any program; arguments are plain words. Off by default.'
        }
        checked={worktree.settings.justTasks === true}
        disabled={!live || busy || worktree.settings.justTasksByHost === true}
        onChange={(justTasks) => void change({ justTasks })}
      />
      {worktree.settings.justTasksByHost === true && (
        <p className="notice" role="note">
          Just tasks are on for every worktree: Grove was started with --just-tasks.
        </p>
      )}
      {error && (
        <p className="notice notice--error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

/**
 * The port field: shows the configured port and follows it until the user types; Save checks the
 * number here, then asks the host, which restarts a running server on the new port (or the next
 * free one, if another program holds it).
 */
function PortSetting({
  worktree,
  live,
  serverBusy,
}: {
  worktree: WorktreeState;
  live: boolean;
  serverBusy: boolean;
}) {
  const store = useHostStore();
  const inputId = useId();
  const hintId = useId();
  const messageId = useId();
  /** What the user typed; null: the field shows the configured port. */
  const [draft, setDraft] = useState<string | null>(null);
  const [invalid, setInvalid] = useState(false);
  /** While the host works: it restarts a server that was running when Save was pressed. */
  const [busy, setBusy] = useState<'saving' | 'restarting' | null>(null);
  const [message, setMessage] = useState<PortOutcome | null>(null);
  const value = draft ?? String(worktree.port);
  const running = worktree.status.state === 'running';

  const save = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    const problem = portProblem(value);
    setInvalid(problem !== null);
    if (problem) {
      setMessage({ tone: 'error', text: problem });
      return;
    }
    const port = Number(value);
    setBusy(running ? 'restarting' : 'saving');
    setMessage(null);
    try {
      const result = await store.commands.setWorktreePort({ worktreeId: worktree.id, port });
      setDraft(null);
      setMessage(portOutcome(port, running, result));
    } catch (caught) {
      setMessage({ tone: 'error', text: errorText(caught) });
    } finally {
      setBusy(null);
    }
  };

  return (
    <form className="port-setting" noValidate onSubmit={(event) => void save(event)}>
      <div className="port-setting__row">
        <label htmlFor={inputId} className="port-setting__label">
          Port
        </label>
        <input
          id={inputId}
          className="input"
          type="number"
          inputMode="numeric"
          min={WORKTREE_PORT_MIN}
          max={WORKTREE_PORT_MAX}
          step={1}
          value={value}
          disabled={busy !== null}
          aria-invalid={invalid ? true : undefined}
          aria-describedby={message ? `${hintId} ${messageId}` : hintId}
          onChange={(event) => {
            setDraft(event.target.value);
            setInvalid(false);
            setMessage(null);
          }}
        />
        <button
          type="submit"
          className="button"
          aria-label="Save port"
          disabled={busy !== null || !live || serverBusy || value.trim() === String(worktree.port)}
        >
          {busy === 'restarting' ? 'Restarting…' : busy === 'saving' ? 'Saving…' : 'Save'}
        </button>
      </div>
      <p id={hintId} className="port-setting__hint">
        {running
          ? 'Saving restarts the server on the new port.'
          : 'The server listens on the new port when it starts.'}{' '}
        If another program holds the port, it moves to the next free one. Clients configured with
        the old URL need the new one.
      </p>
      {message && (
        <p
          id={messageId}
          className={message.tone === 'ok' ? 'notice' : 'notice notice--error'}
          role={message.tone === 'ok' ? 'status' : 'alert'}
        >
          {message.text}
        </p>
      )}
    </form>
  );
}

function Switch({
  label,
  hint,
  checked,
  disabled,
  onChange,
}: {
  label: string;
  hint: string;
  checked: boolean;
  disabled: boolean;
  onChange(checked: boolean): void;
}) {
  return (
    <label className="switch">
      <input
        type="checkbox"
        role="switch"
        className="switch__input"
        checked={checked}
        disabled={disabled}
        onChange={(event) => onChange(event.target.checked)}
      />
      <span className="switch__track" aria-hidden="true" />
      <span className="switch__text">
        <span className="switch__label">{label}</span>
        <span className="switch__hint">{hint}</span>
      </span>
    </label>
  );
}

function TokenRow({
  worktree,
  live,
  connection,
}: {
  worktree: WorktreeState;
  live: boolean;
  connection: ReturnType<typeof useConnectionInfo>;
}) {
  const store = useHostStore();
  const [revealed, setRevealed] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ tone: 'ok' | 'error'; text: string } | null>(null);
  const { result } = connection;

  const rotate = async (): Promise<void> => {
    setBusy(true);
    setMessage(null);
    try {
      connection.replace(await store.commands.rotateToken({ worktreeId: worktree.id }));
      setMessage({
        tone: 'ok',
        text: 'New token in effect: the old one is refused. Update your clients (Connect tab).',
      });
    } catch (caught) {
      setMessage({ tone: 'error', text: errorText(caught) });
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };

  return (
    <div className="urls__row">
      <dt>Token</dt>
      <dd className="token">
        {result.state === 'loading' && <span className="muted">Loading…</span>}
        {result.state === 'error' && (
          <span className="error-text" role="alert">
            {result.message}{' '}
            <button type="button" className="link-button" onClick={connection.reload}>
              Try again
            </button>
          </span>
        )}
        {result.state === 'ready' && (
          <>
            <code className="token__value" aria-label={revealed ? 'Token' : 'Token (hidden)'}>
              {revealed ? result.info.token : '•'.repeat(24)}
            </code>
            <button
              type="button"
              className="button button--quiet"
              aria-pressed={revealed}
              aria-label={revealed ? 'Hide token' : 'Reveal token'}
              onClick={() => setRevealed(!revealed)}
            >
              {revealed ? 'Hide' : 'Reveal'}
            </button>
            <CopyButton value={result.info.token} label="Copy token" disabled={!live} />
            <button
              type="button"
              className="button button--quiet"
              aria-label="Rotate token"
              disabled={!live || busy}
              onClick={() => setConfirming(true)}
            >
              Rotate…
            </button>
            {confirming && (
              <ConfirmDialog
                title="Rotate the token?"
                confirmLabel="Rotate now"
                busyLabel="Rotating…"
                busy={busy}
                onConfirm={() => void rotate()}
                onCancel={() => setConfirming(false)}
              >
                <p>
                  Clients using the current token will be refused until they are given the new one
                  (Connect tab).
                </p>
              </ConfirmDialog>
            )}
          </>
        )}
        {message && (
          <p
            className={message.tone === 'ok' ? 'token__message' : 'token__message error-text'}
            role={message.tone === 'ok' ? 'status' : 'alert'}
          >
            {message.text}
          </p>
        )}
      </dd>
    </div>
  );
}
