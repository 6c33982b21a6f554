// The Connect tab: ready-to-paste configs for every MCP client Grove knows (shared/client-configs.ts),
// each with a Copy button, and two writers run by the host: "Add to Claude Desktop" (its config
// file) and "Add to project .mcp.json" (Claude Code, in this worktree). A worktree's .mcp.json is
// repository content, often committed: the window first shows what would change (the lines around
// Grove's entry, nothing else differs) and writes only when the user confirms.
import { useId, useState } from 'react';
import {
  clientConfigs,
  TOKEN_ENV_VAR,
  type ClientConfigSnippet,
} from '../../../shared/client-configs.ts';
import type { ConfigPreview, ConfigWriteResult } from '../../../shared/host-api.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import { CopyButton } from '../common/copy-button.tsx';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { DiffView } from '../reconcile/diff-view.tsx';
import { type useConnectionInfo } from './use-connection-info.ts';
import { PortMovedNote } from './port-moved-note.tsx';

export interface ConnectTabProps {
  worktree: WorktreeState;
  connection: ReturnType<typeof useConnectionInfo>;
  live: boolean;
}

export function ConnectTab({ worktree, connection, live }: ConnectTabProps) {
  const { result } = connection;
  if (result.state === 'loading') {
    return (
      <div className="empty" role="status">
        <span className="spinner" aria-hidden="true" />
        <p className="empty__title">Loading connection details…</p>
      </div>
    );
  }
  if (result.state === 'error') {
    return (
      <div className="empty empty--error" role="alert">
        <p className="empty__title">Could not load the connection details</p>
        <p className="empty__detail">{result.message}</p>
        <button type="button" className="button" onClick={connection.reload}>
          Try again
        </button>
      </div>
    );
  }
  const snippets = clientConfigs({
    branch: worktree.branch,
    path: worktree.path,
    urls: result.info.urls,
    token: result.info.token,
    bridge: result.info.bridge,
  });
  return (
    <div className="stack">
      <PortMovedNote key={worktree.id} worktree={worktree} live={live} where="connect" />
      <section className="card" aria-label="Add to a client">
        <div className="writers">
          <Writer
            label="Add to Claude Desktop"
            description="Adds this worktree to claude_desktop_config.json (other servers are kept, the old file is backed up)."
            run={(store) => store.commands.addToClaudeDesktop({ worktreeId: worktree.id })}
            live={live}
          />
          <ProjectMcpJsonWriter worktreeId={worktree.id} live={live} />
        </div>
        {worktree.status.state !== 'running' && (
          <p className="notice" role="note">
            The server is not running: clients will connect once you start it.
          </p>
        )}
      </section>
      {snippets.map((snippet) => (
        <Snippet key={snippet.id} snippet={snippet} />
      ))}
    </div>
  );
}

function Writer({
  label,
  description,
  run,
  live,
}: {
  label: string;
  description: string;
  run(store: ReturnType<typeof useHostStore>): Promise<ConfigWriteResult>;
  live: boolean;
}) {
  const store = useHostStore();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<
    { state: 'done'; result: ConfigWriteResult } | { state: 'error'; message: string } | null
  >(null);

  const write = async (): Promise<void> => {
    setBusy(true);
    setOutcome(null);
    try {
      setOutcome({ state: 'done', result: await run(store) });
    } catch (error) {
      setOutcome({ state: 'error', message: errorText(error) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="writer">
      <button
        type="button"
        className="button button--primary"
        disabled={busy || !live}
        onClick={() => void write()}
      >
        {busy ? 'Writing…' : label}
      </button>
      <p className="muted writer__description">{description}</p>
      {outcome?.state === 'done' && <WriteOutcome result={outcome.result} />}
      {outcome?.state === 'error' && (
        <p className="notice notice--error" role="alert">
          {outcome.message}
        </p>
      )}
    </div>
  );
}

function WriteOutcome({ result }: { result: ConfigWriteResult }) {
  if (result.unchanged) {
    return (
      <p className="writer__result" role="status">
        <code>{result.path}</code> already holds <code>{result.serverName}</code>: nothing was
        written.
      </p>
    );
  }
  return (
    <p className="writer__result" role="status">
      Added <code>{result.serverName}</code> to <code>{result.path}</code>
      {result.backupPath ? (
        <>
          {' '}
          (the old file is backed up at <code>{result.backupPath}</code>)
        </>
      ) : (
        ' (new file)'
      )}
      .
    </p>
  );
}

type McpJsonStep =
  | { step: 'idle' }
  | { step: 'loading' }
  | { step: 'preview'; preview: ConfigPreview }
  | { step: 'writing'; preview: ConfigPreview }
  | { step: 'done'; result: ConfigWriteResult }
  | { step: 'error'; message: string };

/** "Add to project .mcp.json": a preview of the change first, written only when confirmed. */
function ProjectMcpJsonWriter({ worktreeId, live }: { worktreeId: string; live: boolean }) {
  const store = useHostStore();
  const headingId = useId();
  const [state, setState] = useState<McpJsonStep>({ step: 'idle' });

  const preview = async (): Promise<void> => {
    setState({ step: 'loading' });
    try {
      setState({
        step: 'preview',
        preview: await store.commands.previewProjectMcpJson({ worktreeId }),
      });
    } catch (error) {
      setState({ step: 'error', message: errorText(error) });
    }
  };
  const write = async (shown: ConfigPreview): Promise<void> => {
    setState({ step: 'writing', preview: shown });
    try {
      const result = await store.commands.addToProjectMcpJson({
        worktreeId,
        expected: shown.before,
      });
      setState({ step: 'done', result });
    } catch (error) {
      setState({ step: 'error', message: errorText(error) });
    }
  };

  const shown = state.step === 'preview' || state.step === 'writing' ? state.preview : null;
  return (
    <div className="writer">
      {!shown && (
        <button
          type="button"
          className="button button--primary"
          disabled={state.step === 'loading' || !live}
          onClick={() => void preview()}
        >
          {state.step === 'loading' ? 'Reading…' : 'Add to project .mcp.json…'}
        </button>
      )}
      <p className="muted writer__description">
        Adds this worktree to .mcp.json in the worktree, for Claude Code; the token comes from $
        {TOKEN_ENV_VAR}. You see the change before anything is written.
      </p>
      {shown && (
        <section className="mcp-preview" aria-labelledby={headingId}>
          <h3 id={headingId} className="card__title">
            {shown.unchanged
              ? `${shown.path} already holds ${shown.serverName}`
              : shown.before === null
                ? `Create ${shown.path}?`
                : `Change ${shown.path}?`}
          </h3>
          {!shown.unchanged && (
            <>
              <p className="muted">
                {shown.before === null
                  ? 'The file does not exist yet; it will hold only this entry.'
                  : `Only the entry ${shown.serverName} changes; every other entry keeps its text. The old file is backed up in Grove's data directory, not in the worktree.`}
              </p>
              <ChangedLines before={shown.before ?? ''} after={shown.after} />
            </>
          )}
          <div className="button-row">
            {!shown.unchanged && (
              <button
                type="button"
                className="button button--primary"
                disabled={state.step === 'writing' || !live}
                onClick={() => void write(shown)}
              >
                {state.step === 'writing' ? 'Writing…' : 'Write .mcp.json'}
              </button>
            )}
            <button
              type="button"
              className="button"
              disabled={state.step === 'writing'}
              onClick={() => setState({ step: 'idle' })}
            >
              {shown.unchanged ? 'Close' : 'Cancel'}
            </button>
          </div>
        </section>
      )}
      {state.step === 'done' && <WriteOutcome result={state.result} />}
      {state.step === 'error' && (
        <p className="notice notice--error" role="alert">
          {state.message}
        </p>
      )}
    </div>
  );
}

const CONTEXT_LINES = 2;

/**
 * The lines that differ between two texts (one changed span: Grove's edit never touches two
 * places), with a little context, as a unified diff.
 */
function ChangedLines({ before, after }: { before: string; after: string }) {
  const a = before === '' ? [] : before.replace(/\r\n/g, '\n').split('\n');
  const b = after.replace(/\r\n/g, '\n').split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const from = Math.max(0, start - CONTEXT_LINES);
  const lines = [
    ...a.slice(from, start).map((text) => ` ${text}`),
    ...a.slice(start, endA).map((text) => `-${text}`),
    ...b.slice(start, endB).map((text) => `+${text}`),
    ...a.slice(endA, endA + CONTEXT_LINES).map((text) => ` ${text}`),
  ];
  return <DiffView diff={lines.join('\n')} label="What changes in .mcp.json" />;
}

function Snippet({ snippet }: { snippet: ClientConfigSnippet }) {
  const headingId = useId();
  const name = `${snippet.client}: ${snippet.title}`;
  return (
    <section className="card snippet" aria-labelledby={headingId}>
      <header className="snippet__header">
        <h3 id={headingId} className="card__title">
          {snippet.client} <span className="snippet__title">{snippet.title}</span>
        </h3>
        <CopyButton value={snippet.text} label={`Copy ${name}`} />
      </header>
      <p className="muted snippet__location">{snippet.location}</p>
      <pre className={`code-block code-block--${snippet.language}`} aria-label={name}>
        {snippet.text}
      </pre>
      {snippet.note && <p className="snippet__note">{snippet.note}</p>}
    </section>
  );
}
