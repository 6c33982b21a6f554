// The Tools tab, a small built-in inspector: every tool the worktree's server offers (name, title,
// description, annotations, input schema), a form generated from the schema and the same arguments
// as JSON, checked against the schema before sending (a call the schema refuses can still be sent
// on purpose, to test the server), the result of the call it answers, and the window's earlier
// calls to show again or call again. Calls go through the host's tool console (host commands
// listTools/callTool), which shows in the Clients list as "Grove (this window)".
import { useEffect, useId, useState } from 'react';
import type { ToolCallResult, ToolInfo } from '../../../shared/host-api.ts';
import type { WorktreeState } from '../../../shared/model.ts';
import type { ReconcileState } from '../../../shared/reconcile.ts';
import {
  checkAgainstSchema,
  exampleArguments,
  type SchemaIssue,
} from '../tools/json-schema-check.ts';
import { formFields, SchemaForm } from '../tools/schema-form.tsx';
import { CopyButton } from '../common/copy-button.tsx';
import { duration } from '../common/format.ts';
import { useHostState, useHostStore } from '../common/store-context.tsx';
import { errorText } from '../common/error-text.ts';

/** One call this window made, newest first in the history. */
interface ConsoleCall {
  id: number;
  tool: string;
  args: unknown;
  at: number;
  /** Sent although the schema check refused its arguments. */
  unchecked: boolean;
  outcome: { state: 'result'; result: ToolCallResult } | { state: 'error'; message: string };
}

/** Calls the history keeps (this window, this tab's lifetime). */
const HISTORY_LIMIT = 50;

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
  const [history, setHistory] = useState<ConsoleCall[]>([]);
  /** Arguments to load into a tool's form (Call again from the history). */
  const [preset, setPreset] = useState<{ tool: string; args: unknown; id: number } | null>(null);
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
      <div className="tools__main">
        <ToolDetail
          key={`${selected.name}:${preset?.tool === selected.name ? preset.id : ''}`}
          tool={selected}
          worktreeId={worktree.id}
          live={live}
          known={knownArguments(selected.name, reconcile)}
          initialArgs={preset?.tool === selected.name ? preset.args : undefined}
          onCalled={(call) => setHistory((earlier) => [call, ...earlier].slice(0, HISTORY_LIMIT))}
        />
        <CallHistory
          calls={history}
          onCallAgain={(call) => {
            setSelectedName(call.tool);
            setPreset({ tool: call.tool, args: call.args, id: call.id });
          }}
        />
      </div>
    </div>
  );
}

let nextCallId = 1;

/** The window's earlier calls: each with its arguments and outcome, to show or call again. */
function CallHistory({
  calls,
  onCallAgain,
}: {
  calls: ConsoleCall[];
  onCallAgain(call: ConsoleCall): void;
}) {
  const headingId = useId();
  const [shown, setShown] = useState<number | null>(null);
  if (calls.length === 0) return null;
  const open = calls.find((call) => call.id === shown);
  return (
    <section className="call-history" aria-labelledby={headingId}>
      <h4 id={headingId}>Earlier calls from this window</h4>
      <ol className="call-history__list">
        {calls.map((call) => {
          const failed = call.outcome.state === 'error' || call.outcome.result.isError === true;
          return (
            <li key={call.id} className="call-history__item">
              <span className={failed ? 'tag tag--warn' : 'tag tag--quiet'}>
                {failed ? 'error' : 'ok'}
              </span>{' '}
              <code>{call.tool}</code>{' '}
              <code className="call-history__args">{JSON.stringify(call.args)}</code>{' '}
              <span className="muted">{new Date(call.at).toLocaleTimeString()}</span>
              {call.unchecked && <span className="muted"> (sent unchecked)</span>}{' '}
              <button
                type="button"
                className="button button--small"
                aria-expanded={shown === call.id}
                onClick={() => setShown(shown === call.id ? null : call.id)}
              >
                {shown === call.id ? 'Hide' : 'Show'} result
              </button>{' '}
              <button
                type="button"
                className="button button--small"
                onClick={() => onCallAgain(call)}
              >
                Load arguments
              </button>
            </li>
          );
        })}
      </ol>
      {open && <Outcome call={open} />}
    </section>
  );
}

/** A call's outcome under a heading that says which call it answers. */
function Outcome({ call }: { call: ConsoleCall }) {
  if (call.outcome.state === 'error') {
    return (
      <p className="notice notice--error" role="alert">
        {call.tool}: {call.outcome.message}
      </p>
    );
  }
  return <ResultView result={call.outcome.result} call={call} />;
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
  initialArgs,
  onCalled,
}: {
  tool: ToolInfo;
  worktreeId: string;
  live: boolean;
  /** Good values for arguments by name (knownArguments). */
  known: Record<string, unknown>;
  /** Arguments to start from (an earlier call's), instead of an example. */
  initialArgs?: unknown;
  onCalled(call: ConsoleCall): void;
}) {
  const store = useHostStore();
  const headingId = useId();
  const argsId = useId();
  const issuesId = useId();
  const [text, setText] = useState(() =>
    JSON.stringify(initialArgs ?? exampleArguments(tool.inputSchema, known), null, 2),
  );
  const [issues, setIssues] = useState<SchemaIssue[]>([]);
  const [parseError, setParseError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [last, setLast] = useState<ConsoleCall | null>(null);
  const fields = formFields(tool.inputSchema);
  const parsed = parseArguments(text);

  const call = async (force: boolean): Promise<void> => {
    // A new attempt: the last call's result no longer stands under these arguments.
    setLast(null);
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
    const notAnObject = typeof args !== 'object' || args === null || Array.isArray(args);
    if (notAnObject) {
      found.unshift({ path: '', message: 'The arguments must be a JSON object' });
    }
    setIssues(found);
    if (found.length > 0 && !force) return;
    setBusy(true);
    const made = { id: nextCallId++, tool: tool.name, args, at: Date.now(), unchecked: force };
    let outcome: ConsoleCall['outcome'];
    try {
      const result = await store.commands.callTool({
        worktreeId,
        name: tool.name,
        // Sent as typed when sent on purpose unchecked (the host's command wants an object).
        arguments: (notAnObject ? { value: args } : args) as Record<string, unknown>,
      });
      outcome = { state: 'result', result };
    } catch (error) {
      outcome = { state: 'error', message: errorText(error) };
    } finally {
      setBusy(false);
    }
    const finished = { ...made, outcome };
    setLast(finished);
    onCalled(finished);
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
          void call(false);
        }}
      >
        <SchemaForm
          fields={fields}
          args={parsed.args}
          disabledReason={
            parsed.args === null ? 'Make the JSON below an object to use these fields.' : null
          }
          onChange={(args) => {
            setText(JSON.stringify(args, null, 2));
            setIssues([]);
            setParseError(null);
          }}
        />
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
              void call(false);
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
          {issues.length > 0 && parseError === null && (
            <button
              type="button"
              className="button"
              disabled={busy || !live}
              title="Send the arguments as they are, to see what the server answers"
              onClick={() => void call(true)}
            >
              Send anyway
            </button>
          )}
        </div>
      </form>
      {last && <Outcome call={last} />}
    </section>
  );
}

/** The JSON as the form sees it: an object, or null (empty text is `{}`). */
function parseArguments(text: string): { args: Record<string, unknown> | null } {
  if (text.trim() === '') return { args: {} };
  try {
    const value: unknown = JSON.parse(text);
    return {
      args:
        typeof value === 'object' && value !== null && !Array.isArray(value)
          ? (value as Record<string, unknown>)
          : null,
    };
  } catch {
    return { args: null };
  }
}

function ResultView({ result, call }: { result: ToolCallResult; call: ConsoleCall }) {
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
        <span className="muted">
          of <code>{call.tool}</code> {JSON.stringify(call.args)}, {duration(result.durationMs)}
        </span>
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
