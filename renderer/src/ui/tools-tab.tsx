// The Tools tab, a small built-in inspector: every tool the worktree's server offers (name, title,
// description, annotations, input schema), and a form to call one with JSON arguments, checked
// against the schema before sending, showing the result. Calls go through the host's tool console
// (host commands listTools/callTool), which shows in the Clients list as "Grove (this window)".
import { useEffect, useId, useState } from 'react';
import type { ToolCallResult, ToolInfo } from '../../../shared/host-api.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import {
  checkAgainstSchema,
  exampleArguments,
  type SchemaIssue,
} from '../tools/json-schema-check.ts';
import { CopyButton } from '../common/copy-button.tsx';
import { duration } from '../common/format.ts';
import { useHostState, useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';

type ToolList =
  | { state: 'loading' }
  | { state: 'ready'; tools: ToolInfo[] }
  | { state: 'error'; message: string };

export function ToolsTab({ worktree, live }: { worktree: WorktreeState; live: boolean }) {
  const store = useHostStore();
  const running = worktree.status.state === 'running';
  const [list, setList] = useState<ToolList>({ state: 'loading' });
  const [selectedName, setSelectedName] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const reconcile = useHostState().snapshot?.reconcile[worktree.id];

  useEffect(() => {
    if (!running) return;
    let cancelled = false;
    store.commands.listTools({ worktreeId: worktree.id }).then(
      ({ tools }) => {
        if (!cancelled) setList({ state: 'ready', tools });
      },
      (error: unknown) => {
        if (!cancelled) setList({ state: 'error', message: errorText(error) });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [store, worktree.id, worktree.port, running, generation]);

  if (!running) {
    return (
      <div className="empty" role="status">
        <p className="empty__title">The server is not running</p>
        <p className="empty__detail">Start it on the Server tab to see and call its tools.</p>
      </div>
    );
  }
  if (list.state === 'loading') {
    return (
      <div className="empty" role="status">
        <span className="spinner" aria-hidden="true" />
        <p className="empty__title">Loading tools…</p>
      </div>
    );
  }
  if (list.state === 'error') {
    return (
      <div className="empty empty--error" role="alert">
        <p className="empty__title">Could not list the tools</p>
        <p className="empty__detail">{list.message}</p>
        <button
          type="button"
          className="button"
          onClick={() => {
            setList({ state: 'loading' });
            setGeneration((n) => n + 1);
          }}
        >
          Try again
        </button>
      </div>
    );
  }
  if (list.tools.length === 0) {
    return (
      <div className="empty" role="status">
        <p className="empty__title">This server offers no tools</p>
      </div>
    );
  }

  const selected = list.tools.find((tool) => tool.name === selectedName) ?? list.tools[0]!;
  return (
    <div className="tools">
      <ul className="tool-list" aria-label="Tools">
        {list.tools.map((tool) => (
          <li key={tool.name}>
            <button
              type="button"
              className={
                tool.name === selected.name ? 'tool-item tool-item--selected' : 'tool-item'
              }
              aria-pressed={tool.name === selected.name}
              onClick={() => setSelectedName(tool.name)}
            >
              <code className="tool-item__name">{tool.name}</code>
              {tool.title && <span className="tool-item__title">{tool.title}</span>}
            </button>
          </li>
        ))}
      </ul>
      <ToolDetail
        key={selected.name}
        tool={selected}
        worktreeId={worktree.id}
        live={live}
        known={knownArguments(selected.name, reconcile)}
      />
    </div>
  );
}

const HINTS: [string, string][] = [
  ['readOnlyHint', 'read-only'],
  ['idempotentHint', 'idempotent'],
  ['destructiveHint', 'destructive'],
  ['openWorldHint', 'open world'],
];

/**
 * Values that make a first call succeed, by argument name: the worktree's base branch and first
 * spec, a README, the root directory.
 */
function knownArguments(
  toolName: string,
  reconcile: ReconcileState | undefined,
): Record<string, unknown> {
  const directoryTool = /directory|tree|search|grep/.test(toolName);
  return {
    path: directoryTool ? '.' : 'README.md',
    paths: ['README.md'],
    patterns: ['**/*.md'],
    pattern: 'TODO',
    ...(reconcile ? { base_branch: reconcile.base } : {}),
    ...(reconcile?.specs[0] ? { spec_path: reconcile.specs[0].path } : {}),
  };
}

function ToolDetail({
  tool,
  worktreeId,
  live,
  known,
}: {
  tool: ToolInfo;
  worktreeId: string;
  live: boolean;
  /** Good values for arguments by name (knownArguments). */
  known: Record<string, unknown>;
}) {
  const store = useHostStore();
  const headingId = useId();
  const argsId = useId();
  const issuesId = useId();
  const [text, setText] = useState(() =>
    JSON.stringify(exampleArguments(tool.inputSchema, known), null, 2),
  );
  const [issues, setIssues] = useState<SchemaIssue[]>([]);
  const [parseError, setParseError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<
    { state: 'result'; result: ToolCallResult } | { state: 'error'; message: string } | null
  >(null);

  const call = async (): Promise<void> => {
    let args: unknown;
    try {
      args = text.trim() === '' ? {} : JSON.parse(text);
    } catch (error) {
      setParseError(`Not valid JSON: ${errorText(error)}`);
      setIssues([]);
      return;
    }
    setParseError(null);
    const found = checkAgainstSchema(args, tool.inputSchema);
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      found.unshift({ path: '', message: 'The arguments must be a JSON object' });
    }
    setIssues(found);
    if (found.length > 0) return;
    setBusy(true);
    setOutcome(null);
    try {
      const result = await store.commands.callTool({
        worktreeId,
        name: tool.name,
        arguments: args as Record<string, unknown>,
      });
      setOutcome({ state: 'result', result });
    } catch (error) {
      setOutcome({ state: 'error', message: errorText(error) });
    } finally {
      setBusy(false);
    }
  };

  const hints = HINTS.filter(([key]) => tool.annotations?.[key] === true);
  const invalid = parseError !== null || issues.length > 0;

  return (
    <section className="tool-detail" aria-labelledby={headingId}>
      <header className="tool-detail__header">
        <h3 id={headingId}>
          <code>{tool.name}</code>
        </h3>
        {tool.title && <span className="muted">{tool.title}</span>}
        {hints.map(([key, label]) => (
          <span key={key} className="tag tag--quiet">
            {label}
          </span>
        ))}
      </header>
      {tool.description && <p className="tool-detail__description">{tool.description}</p>}
      <details className="schema">
        <summary>Input schema</summary>
        <pre className="code-block" aria-label={`Input schema of ${tool.name}`} tabIndex={0}>
          {JSON.stringify(tool.inputSchema, null, 2)}
        </pre>
      </details>
      <form
        className="call-form"
        onSubmit={(event) => {
          event.preventDefault();
          void call();
        }}
      >
        <label htmlFor={argsId} className="call-form__label">
          Arguments (JSON)
        </label>
        <textarea
          id={argsId}
          className="textarea"
          spellCheck={false}
          rows={Math.min(12, Math.max(4, text.split('\n').length + 1))}
          value={text}
          aria-invalid={invalid ? true : undefined}
          aria-describedby={invalid ? issuesId : undefined}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void call();
            }
          }}
        />
        {invalid && (
          <ul className="issues" id={issuesId} role="alert">
            {parseError && <li>{parseError}</li>}
            {issues.map((issue) => (
              <li key={`${issue.path}:${issue.message}`}>{issue.message}</li>
            ))}
          </ul>
        )}
        <div className="button-row">
          <button type="submit" className="button button--primary" disabled={busy || !live}>
            {busy ? 'Calling…' : `Call ${tool.name}`}
          </button>
          <span className="muted">Ctrl+Enter</span>
        </div>
      </form>
      {outcome?.state === 'error' && (
        <p className="notice notice--error" role="alert">
          {outcome.message}
        </p>
      )}
      {outcome?.state === 'result' && <ResultView result={outcome.result} />}
    </section>
  );
}

function ResultView({ result }: { result: ToolCallResult }) {
  const headingId = useId();
  const text = result.content
    .map((block) =>
      block['type'] === 'text' && typeof block['text'] === 'string'
        ? block['text']
        : JSON.stringify(block),
    )
    .join('\n');
  const structured = result.structuredContent;
  // Text fields with lines (a file's content, a diff) read as text, not as one escaped string.
  const texts = structured
    ? Object.entries(structured).filter(
        (entry): entry is [string, string] =>
          typeof entry[1] === 'string' && entry[1].includes('\n'),
      )
    : [];
  const rest = structured
    ? Object.fromEntries(
        Object.entries(structured).filter(([key]) => !texts.some(([k]) => k === key)),
      )
    : null;
  const shown = structured ? JSON.stringify(structured, null, 2) : text;
  return (
    <section
      className={result.isError ? 'result result--error' : 'result'}
      aria-labelledby={headingId}
      aria-live="polite"
    >
      <header className="result__header">
        <h4 id={headingId}>{result.isError ? 'Tool error' : 'Result'}</h4>
        <span className="muted">{duration(result.durationMs)}</span>
        <CopyButton value={shown} label="Copy result" />
      </header>
      <pre className="code-block result__body" aria-label="Tool result" tabIndex={0}>
        {rest ? JSON.stringify(rest, null, 2) : text}
      </pre>
      {texts.map(([key, value]) => (
        <div key={key} className="result__text">
          <h5 className="result__text-label">{key}</h5>
          <pre className="code-block result__body" aria-label={`Tool result: ${key}`} tabIndex={0}>
            {value}
          </pre>
        </div>
      ))}
    </section>
  );
}
