// The Connect tab's writers ("Add to Claude Desktop", "Add to project .mcp.json"): each first asks
// the host what would change and shows it (the lines around Grove's entry; nothing else differs),
// and writes only when the user confirms, sending back the text it showed so the host refuses a
// file that changed since (main/host/client-config-writer.ts).
import { useId, useState, type ReactNode } from 'react';
import { changedLines } from '../../../shared/changed-lines.ts';
import type { ConfigPreview, ConfigWriteResult } from '../../../shared/host-api.ts';
import { errorText } from '../common/error-text.ts';
import { useHostStore } from '../common/store-context.tsx';
import { DiffView } from '../reconcile/diff-view.tsx';

type HostStore = ReturnType<typeof useHostStore>;

export interface PreviewedWriterProps {
  /** The first button, e.g. "Add to Claude Desktop…". */
  label: string;
  /** The confirm button, e.g. "Write claude_desktop_config.json". */
  confirmLabel: string;
  /** What the file is, for the diff's label (e.g. "claude_desktop_config.json"). */
  fileLabel: string;
  description: ReactNode;
  /** Where the old file's backup goes, said under the preview. */
  backupWhere: string;
  preview(store: HostStore): Promise<ConfigPreview>;
  write(store: HostStore, expected: string | null): Promise<ConfigWriteResult>;
  live: boolean;
}

type Step =
  | { step: 'idle' }
  | { step: 'loading' }
  | { step: 'preview'; preview: ConfigPreview }
  | { step: 'writing'; preview: ConfigPreview }
  | { step: 'done'; result: ConfigWriteResult }
  | { step: 'error'; message: string };

/** A writer that shows the change first and writes only what was shown, when confirmed. */
export function PreviewedWriter(props: PreviewedWriterProps) {
  const { label, confirmLabel, fileLabel, description, backupWhere, live } = props;
  const store = useHostStore();
  const headingId = useId();
  const [state, setState] = useState<Step>({ step: 'idle' });

  const preview = async (): Promise<void> => {
    setState({ step: 'loading' });
    try {
      setState({ step: 'preview', preview: await props.preview(store) });
    } catch (error) {
      setState({ step: 'error', message: errorText(error) });
    }
  };
  const write = async (shown: ConfigPreview): Promise<void> => {
    setState({ step: 'writing', preview: shown });
    try {
      setState({ step: 'done', result: await props.write(store, shown.before) });
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
          {state.step === 'loading' ? 'Reading…' : label}
        </button>
      )}
      <p className="muted writer__description">{description}</p>
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
                  : `Only the entry ${shown.serverName} changes; every other entry keeps its text. The old file is backed up ${backupWhere}.`}
              </p>
              <ChangedLines
                before={shown.before ?? ''}
                after={shown.after}
                label={`What changes in ${fileLabel}`}
              />
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
                {state.step === 'writing' ? 'Writing…' : confirmLabel}
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

const CONTEXT_LINES = 2;

/** The lines that differ between two texts, with a little context (shared/changed-lines.ts). */
function ChangedLines({ before, after, label }: { before: string; after: string; label: string }) {
  const { lines } = changedLines(before, after, CONTEXT_LINES);
  return <DiffView diff={lines.join('\n')} label={label} />;
}
