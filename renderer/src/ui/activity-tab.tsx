// The Activity tab: the calls running now (with their time so far and a Cancel button), then this
// worktree's finished tool calls as they happen (newest first; kept across restarts of Grove),
// filtered by client and by tool, and the details of the selected call. The window's own calls
// (the tool console, specs opened in the window) are not the worktree's activity: shown only when
// the user ticks "This window's calls" (off by default), never counted in the tab's badge. A text
// search matches the tool, the client, the arguments and the error; the count says when older
// calls were dropped (the newest ACTIVITY_LIMIT are kept).
import { useId, useState } from 'react';
import { clientCalls, isWindowCall } from '../../../shared/clients.ts';
import type { ActivityEntry, RunningCall } from '../../../shared/model.ts';
import { errorText } from '../common/error-text.ts';
import { bytes, count, duration, timeOfDay } from '../common/format.ts';
import { ACTIVITY_LIMIT } from '../store/host-store.ts';
import { useHostStore } from '../common/store-context.tsx';
import { CallList } from './call-list.tsx';
import { useNow } from '../common/use-now.ts';

const ALL = '';

interface ActivityTabProps {
  worktreeId: string;
  activity: readonly ActivityEntry[];
  running: readonly RunningCall[];
}

export function ActivityTab({
  worktreeId,
  activity: allActivity,
  running: allRunning,
}: ActivityTabProps) {
  const clientFilterId = useId();
  const toolFilterId = useId();
  const searchId = useId();
  const [search, setSearch] = useState('');
  const [client, setClient] = useState(ALL);
  const [tool, setTool] = useState(ALL);
  const [withWindow, setWithWindow] = useState(false);
  const [selectedId, setSelectedId] = useState<string | null>(null);

  const activity = withWindow ? allActivity : clientCalls(allActivity);
  const running = withWindow ? allRunning : clientCalls(allRunning);
  const windowCalls = allActivity.filter(isWindowCall).length;
  const windowFilter = (
    <label className="filters__toggle">
      <input
        type="checkbox"
        checked={withWindow}
        onChange={(event) => setWithWindow(event.target.checked)}
      />{' '}
      This window&apos;s calls{windowCalls > 0 ? ` (${windowCalls})` : ''}
    </label>
  );

  if (activity.length === 0 && running.length === 0) {
    return (
      <div>
        <div className="empty" role="status">
          <p className="empty__title">No tool calls from clients yet</p>
          <p className="empty__detail">
            Every call a client makes to this worktree shows up here, live.
          </p>
        </div>
        {windowCalls > 0 && (
          <div className="filters" role="group" aria-label="Filter tool calls">
            {windowFilter}
          </div>
        )}
      </div>
    );
  }

  const clients = [...new Set(activity.map((entry) => entry.clientName))].sort();
  const tools = [...new Set(activity.map((entry) => entry.tool))].sort();
  const needle = search.trim().toLowerCase();
  const shown = activity
    .filter(
      (entry) =>
        (client === ALL || entry.clientName === client) &&
        (tool === ALL || entry.tool === tool) &&
        (needle === '' || matches(entry, needle)),
    )
    .toReversed();
  const dropped = allActivity.length >= ACTIVITY_LIMIT;
  const selected = shown.find((entry) => entry.id === selectedId) ?? null;

  return (
    <div className="activity">
      {running.length > 0 && <RunningCalls worktreeId={worktreeId} running={running} />}
      <div className="filters" role="group" aria-label="Filter tool calls">
        <label htmlFor={searchId}>Search</label>
        <input
          id={searchId}
          className="input filters__search"
          type="search"
          placeholder="Tool, client, arguments, error"
          spellCheck={false}
          autoComplete="off"
          value={search}
          onChange={(event) => setSearch(event.target.value)}
        />
        <label htmlFor={clientFilterId}>Client</label>
        <select
          id={clientFilterId}
          className="select"
          value={client}
          onChange={(event) => setClient(event.target.value)}
        >
          <option value={ALL}>All clients</option>
          {clients.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <label htmlFor={toolFilterId}>Tool</label>
        <select
          id={toolFilterId}
          className="select"
          value={tool}
          onChange={(event) => setTool(event.target.value)}
        >
          <option value={ALL}>All tools</option>
          {tools.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        {windowFilter}
        <span className="muted filters__count" aria-live="polite">
          {count(shown.length)} of {count(activity.length)} calls
          {dropped && ` (Grove keeps the newest ${count(ACTIVITY_LIMIT)}; older calls are dropped)`}
        </span>
      </div>
      <div className="activity__body">
        {shown.length === 0 ? (
          <p className="empty-inline">
            {needle === ''
              ? 'No calls match these filters.'
              : `No calls match “${search.trim()}” with these filters.`}
          </p>
        ) : (
          <CallList calls={shown} selectedId={selectedId} onSelect={setSelectedId} />
        )}
        {selected && <CallDetails entry={selected} onClose={() => setSelectedId(null)} />}
      </div>
    </div>
  );
}

/** The calls running now, oldest first, each with its time so far and a Cancel button. */
function RunningCalls({
  worktreeId,
  running,
}: {
  worktreeId: string;
  running: readonly RunningCall[];
}) {
  const store = useHostStore();
  const now = useNow(1000);
  const [problem, setProblem] = useState<string | null>(null);
  const cancel = (callId: string): void => {
    setProblem(null);
    store.commands.cancelToolCall({ worktreeId, callId }).catch((error: unknown) => {
      setProblem(errorText(error));
    });
  };
  return (
    <section className="card" aria-label="Running calls">
      <ol className="calls">
        {running.map((call) => (
          <li key={call.id} className="call call--running">
            <span className="call__running" aria-label="running">
              …
            </span>
            <span className="call__time">{timeOfDay(call.startedAt)}</span>
            <span className="call__tool">{call.tool}</span>
            <span className="call__client">{call.clientName}</span>
            <code className="call__args">{call.argumentsSummary}</code>
            <span className="call__duration">
              running for {duration(Math.max(0, now - call.startedAt))}
            </span>
            <button
              type="button"
              className="button button--small"
              aria-label={`Cancel ${call.tool} call`}
              onClick={() => cancel(call.id)}
            >
              Cancel
            </button>
          </li>
        ))}
      </ol>
      {problem && (
        <p className="notice notice--error" role="alert">
          Could not cancel the call: {problem}
        </p>
      )}
    </section>
  );
}

function CallDetails({ entry, onClose }: { entry: ActivityEntry; onClose(): void }) {
  const headingId = useId();
  return (
    <section className="card call-details" aria-labelledby={headingId}>
      <header className="card__row">
        <h3 className="card__title" id={headingId}>
          {entry.tool} <span className="muted">at {new Date(entry.at).toLocaleString()}</span>
        </h3>
        <button
          type="button"
          className="icon-button"
          aria-label="Close call details"
          onClick={onClose}
        >
          ×
        </button>
      </header>
      <dl className="details">
        <dt>Client</dt>
        <dd>{entry.clientName}</dd>
        <dt>Result</dt>
        <dd className={entry.ok ? undefined : 'error-text'}>
          {entry.ok ? 'Succeeded' : `Failed: ${entry.error ?? 'unknown error'}`}
        </dd>
        <dt>Duration</dt>
        <dd>{duration(entry.durationMs)}</dd>
        <dt>Result size</dt>
        <dd>{bytes(entry.resultBytes)}</dd>
        <dt>Arguments</dt>
        <dd>
          <pre className="code-block" aria-label="Arguments" tabIndex={0}>
            {prettyJson(entry.argumentsSummary)}
          </pre>
        </dd>
      </dl>
    </section>
  );
}

/** Whether a call mentions the (lower-case) text: its tool, client, arguments or error. */
function matches(entry: ActivityEntry, needle: string): boolean {
  return [entry.tool, entry.clientName, entry.argumentsSummary, entry.error ?? ''].some((text) =>
    text.toLowerCase().includes(needle),
  );
}

/** Pretty-prints the summary when it is whole JSON (it may have been cut short). */
function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
