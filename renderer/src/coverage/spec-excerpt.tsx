// The lines of a spec around a finding, shown under the finding in the Coverage tab: read with
// read_file when the finding's link is opened, numbered, the finding's line marked (in words for
// screen readers, not colour alone), and a button that opens the spec in the Reconciliation tab.
import { useEffect, useState } from 'react';
import { errorText } from '../common/error-text.ts';
import { useHostStore } from '../common/store-context.tsx';
import { readLines, type SpecLines } from './coverage-calls.ts';
import { excerptRange } from './coverage-format.ts';

type Load =
  { state: 'loading' } | { state: 'ready'; lines: SpecLines } | { state: 'error'; message: string };

export function SpecExcerpt({
  worktreeId,
  specPath,
  line,
  id,
  onOpenSpec,
}: {
  worktreeId: string;
  specPath: string;
  line: number | null;
  id: string;
  /** Opens the spec in the Reconciliation tab; absent when the spec is not listed there. */
  onOpenSpec?: (() => void) | undefined;
}) {
  const store = useHostStore();
  const [load, setLoad] = useState<Load>({ state: 'loading' });

  useEffect(() => {
    let cancelled = false;
    readLines(store.commands, worktreeId, specPath, excerptRange(line)).then(
      (lines) => !cancelled && setLoad({ state: 'ready', lines }),
      (error: unknown) => !cancelled && setLoad({ state: 'error', message: errorText(error) }),
    );
    return () => {
      cancelled = true;
    };
  }, [store, worktreeId, specPath, line]);

  return (
    <div className="spec-excerpt" id={id} role="region" aria-label={`${specPath} excerpt`}>
      {load.state === 'loading' && <p className="muted">Reading {specPath}…</p>}
      {load.state === 'error' && (
        <p className="notice notice--error" role="alert">
          {load.message}
        </p>
      )}
      {load.state === 'ready' && (
        <pre className="spec-excerpt__text">
          {load.lines.content
            .replace(/\r?\n$/, '')
            .split(/\r?\n/)
            .map((text, index) => {
              const number = load.lines.start_line + index;
              const here = number === line;
              return (
                <span
                  key={number}
                  className={
                    here ? 'spec-excerpt__line spec-excerpt__line--here' : 'spec-excerpt__line'
                  }
                >
                  <span className="spec-excerpt__number" aria-hidden="true">
                    {number}
                  </span>
                  {here && <span className="visually-hidden">Line {number}, the finding: </span>}
                  {text || ' '}
                  {'\n'}
                </span>
              );
            })}
        </pre>
      )}
      {onOpenSpec && (
        <button type="button" className="button button--small" onClick={onOpenSpec}>
          Open in Reconciliation
        </button>
      )}
    </div>
  );
}
