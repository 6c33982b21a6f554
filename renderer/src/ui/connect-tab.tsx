// The Connect tab: ready-to-paste configs for every MCP client Grove knows (shared/client-configs.ts),
// each with a Copy button; this worktree's token variable and how each kind of client gets it; and
// two writers run by the host, "Add to Claude Desktop" (the user's config file) and "Add to project
// .mcp.json" (Claude Code, in this worktree), which show the change first (config-writer.tsx).
import { useId } from 'react';
import {
  clientConfigs,
  clientConfigTarget,
  tokenEnvVar,
  tokenInFileNote,
  tokenVariableSetups,
  TOKEN_VARIABLE_HEADING,
  type ClientConfigSnippet,
  type ClientConfigTarget,
} from '../../../shared/client-configs.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import { CopyButton } from '../common/copy-button.tsx';
import { useHostState } from '../common/store-context.tsx';
import { PreviewedWriter } from './config-writer.tsx';
import { type useConnectionInfo } from './use-connection-info.ts';
import { PortMovedNote } from './port-moved-note.tsx';

export interface ConnectTabProps {
  worktree: WorktreeState;
  connection: ReturnType<typeof useConnectionInfo>;
  live: boolean;
}

export function ConnectTab({ worktree, connection, live }: ConnectTabProps) {
  const { result } = connection;
  const repo = useHostState().snapshot?.repos.find((r) => r.id === worktree.repoId);
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
  const target = clientConfigTarget(worktree, repo, result.info);
  const snippets = clientConfigs(target);
  return (
    <div className="stack">
      <PortMovedNote key={worktree.id} worktree={worktree} live={live} where="connect" />
      <section className="card" aria-label="Add to a client">
        <div className="writers">
          <PreviewedWriter
            label="Add to Claude Desktop…"
            confirmLabel="Write claude_desktop_config.json"
            fileLabel="claude_desktop_config.json"
            description="Adds this worktree to claude_desktop_config.json. You see the change before anything is written; other servers are kept, the old file is backed up."
            backupWhere="beside it"
            preview={(store) => store.commands.previewClaudeDesktop({ worktreeId: worktree.id })}
            write={(store, expected) =>
              store.commands.addToClaudeDesktop({ worktreeId: worktree.id, expected })
            }
            live={live}
          />
          <PreviewedWriter
            label="Add to project .mcp.json…"
            confirmLabel="Write .mcp.json"
            fileLabel=".mcp.json"
            description={
              <>
                Adds this worktree to .mcp.json in the worktree, for Claude Code; the token comes
                from ${tokenEnvVar(target)} ({TOKEN_VARIABLE_HEADING} below). You see the change
                before anything is written. The entry holds this machine&rsquo;s port: if .mcp.json
                is committed, git status shows the change.
              </>
            }
            backupWhere="in Grove's data directory, not in the worktree"
            preview={(store) => store.commands.previewProjectMcpJson({ worktreeId: worktree.id })}
            write={(store, expected) =>
              store.commands.addToProjectMcpJson({ worktreeId: worktree.id, expected })
            }
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
        <Snippet key={snippet.id} snippet={snippet} live={live} />
      ))}
      <TokenVariable target={target} live={live} />
    </div>
  );
}

// The code blocks scroll sideways (long commands): each is a Tab stop with a name, so a keyboard
// user can scroll it too.
function Snippet({ snippet, live }: { snippet: ClientConfigSnippet; live: boolean }) {
  const headingId = useId();
  const name = `${snippet.client}: ${snippet.title}`;
  return (
    <section className="card snippet" aria-labelledby={headingId}>
      <header className="snippet__header">
        <h3 id={headingId} className="card__title">
          {snippet.client} <span className="snippet__title">{snippet.title}</span>
        </h3>
        <CopyButton value={snippet.text} label={`Copy ${name}`} disabled={!live} />
      </header>
      <p className="muted snippet__location">{snippet.location}</p>
      <pre className={`code-block code-block--${snippet.language}`} aria-label={name} tabIndex={0}>
        {snippet.text}
      </pre>
      {snippet.note && <p className="snippet__note">{snippet.note}</p>}
    </section>
  );
}

/**
 * This worktree's token variable, and how each kind of client gets it: a terminal client from the
 * shell's profile, an app started from the dock or Start menu from the system's own place.
 */
function TokenVariable({ target, live }: { target: ClientConfigTarget; live: boolean }) {
  const headingId = useId();
  const variable = tokenEnvVar(target);
  return (
    <section className="card snippet" aria-labelledby={headingId}>
      <h3 id={headingId} className="card__title">
        {TOKEN_VARIABLE_HEADING} <span className="snippet__title">{variable}</span>
      </h3>
      <p className="muted snippet__location">
        The .mcp.json, Cursor, Windsurf and Codex configs read this worktree&rsquo;s token from{' '}
        <code>{variable}</code>. Each worktree has its own token and its own variable, so the
        entries of any number of worktrees can sit in one file. A client sees a variable only if it
        is set where the client starts:
      </p>
      <ul className="token-setups">
        {tokenVariableSetups(target).map((setup) => (
          <li key={setup.id} className="token-setup">
            <div className="snippet__header">
              <p className="token-setup__where">{setup.where}</p>
              <CopyButton
                value={setup.text}
                label={`Copy ${variable}: ${setup.label}`}
                disabled={!live}
              />
            </div>
            <pre
              className="code-block code-block--shell"
              aria-label={`${variable}: ${setup.label}`}
              tabIndex={0}
            >
              {setup.text}
            </pre>
          </li>
        ))}
      </ul>
      <p className="snippet__note">{tokenInFileNote(target)}</p>
    </section>
  );
}
