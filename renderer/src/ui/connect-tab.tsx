// The Connect tab: ready-to-paste configs for every MCP client Grove knows (shared/client-configs.ts),
// each with a Copy button, and two writers run by the host: "Add to Claude Desktop" (its config
// file) and "Add to project .mcp.json" (Claude Code, in this worktree).
import { useId, useState } from 'react';
import {
  clientConfigs,
  TOKEN_ENV_VAR,
  type ClientConfigSnippet,
} from '../../../shared/client-configs.ts';
import type { ConfigWriteResult } from '../../../shared/host-api.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import { CopyButton } from '../common/copy-button.tsx';
import { useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';
import { type useConnectionInfo } from './use-connection-info.ts';

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
      <section className="card" aria-label="Add to a client">
        <div className="writers">
          <Writer
            label="Add to Claude Desktop"
            description="Adds this worktree to claude_desktop_config.json (other servers are kept, the old file is backed up)."
            run={(store) => store.commands.addToClaudeDesktop({ worktreeId: worktree.id })}
            live={live}
          />
          <Writer
            label="Add to project .mcp.json"
            description={`Adds this worktree to .mcp.json in the worktree, for Claude Code; the token comes from $${TOKEN_ENV_VAR}.`}
            run={(store) => store.commands.addToProjectMcpJson({ worktreeId: worktree.id })}
            live={live}
          />
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
      {outcome?.state === 'done' && (
        <p className="writer__result" role="status">
          Added <code>{outcome.result.serverName}</code> to <code>{outcome.result.path}</code>
          {outcome.result.backupPath ? (
            <>
              {' '}
              (backup: <code>{outcome.result.backupPath}</code>)
            </>
          ) : (
            ' (new file)'
          )}
          .
        </p>
      )}
      {outcome?.state === 'error' && (
        <p className="notice notice--error" role="alert">
          {outcome.message}
        </p>
      )}
    </div>
  );
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
