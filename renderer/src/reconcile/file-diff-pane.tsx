// The selected file of a spec's review: its status and its diff vs the base; for a file the same
// as the base, its change since the committed snapshot's commit when there is one; else why there
// is nothing to compare with — a file never reconciled has no earlier version at all, a file
// reconciled at other content only has that content's hash. A changed spec file comes whole.
import { DiffView } from './diff-view.tsx';
import { STATUS_LABEL, type ReviewFile } from './review-files.ts';

/** The diff vs the committed snapshot's commit, asked only when a file needs it. */
export type SnapshotDiffLoad =
  | { state: 'none' }
  | { state: 'loading' }
  | { state: 'ready'; parts: ReadonlyMap<string, string> }
  | { state: 'error'; message: string };

export function FileDiffPane({
  file,
  chunk,
  base,
  snapshotCommit,
  snapshot,
  specContent,
}: {
  file: ReviewFile | null;
  /** The file's part of the diff vs the base, if it has one. */
  chunk: string | undefined;
  base: string;
  snapshotCommit: string | null;
  snapshot: SnapshotDiffLoad;
  /** A changed spec file's content. */
  specContent: string | undefined;
}) {
  if (!file) {
    return (
      <div className="file-diff file-diff--empty">
        <p className="empty-inline">Select a file to see its changes.</p>
      </div>
    );
  }
  const status = STATUS_LABEL[file.status];
  const label = `Diff of ${file.path}`;
  return (
    <section className="file-diff" aria-label={`Changes of ${file.path}`}>
      <header className="file-diff__header">
        <span className={`file-status file-status--${file.status}`} aria-hidden="true">
          {status.tag}
        </span>
        <code className="file-diff__path">{file.path}</code>
        <span className="muted">
          {status.words}
          {file.from ? ` from ${file.from}` : ''}
          {file.status === 'unchanged' ? ` (${base})` : file.markable ? ` vs ${base}` : ''}
          {file.neverReconciled ? '; never reconciled' : ''}
        </span>
      </header>
      {file.otherSpecs.length > 0 && (
        <p className="muted file-diff__shared">
          Also governed by {file.otherSpecs.join(', ')}: marking it reconciles it for{' '}
          {file.otherSpecs.length === 1 ? 'that spec' : 'those specs'} too.
        </p>
      )}
      <Body
        file={file}
        chunk={chunk}
        base={base}
        label={label}
        snapshotCommit={snapshotCommit}
        snapshot={snapshot}
        specContent={specContent}
      />
    </section>
  );
}

function Body({
  file,
  chunk,
  base,
  label,
  snapshotCommit,
  snapshot,
  specContent,
}: {
  file: ReviewFile;
  chunk: string | undefined;
  base: string;
  label: string;
  snapshotCommit: string | null;
  snapshot: SnapshotDiffLoad;
  specContent: string | undefined;
}) {
  if (chunk !== undefined) return <DiffView diff={chunk} label={label} />;
  if (file.binary) {
    return <p className="empty-inline">A binary file: its change is not shown as text.</p>;
  }
  if (file.specFile && specContent !== undefined) {
    return (
      <>
        <p className="muted">The spec file changed since it was reconciled; as it is now:</p>
        <pre className="code-block diff" aria-label={label} tabIndex={0}>
          {specContent}
        </pre>
      </>
    );
  }
  if (file.status !== 'unchanged' && file.status !== 'renamed') {
    return <p className="empty-inline">No text change to show (only its mode changed).</p>;
  }
  // The same as the base: its change since the committed snapshot, or why there is none.
  if (snapshotCommit !== null && !file.neverReconciled) {
    if (snapshot.state === 'loading' || snapshot.state === 'none') {
      return (
        <p className="empty-inline" role="status">
          <span className="spinner spinner--small" aria-hidden="true" /> Loading its change since
          the snapshot…
        </p>
      );
    }
    if (snapshot.state === 'error') {
      return (
        <p className="notice notice--error" role="alert">
          Could not get its change since the snapshot: {snapshot.message}
        </p>
      );
    }
    const part = snapshot.parts.get(file.path);
    if (part !== undefined) {
      return (
        <>
          <p className="muted">
            The same as {base}. Its change since the committed snapshot (commit{' '}
            {snapshotCommit.slice(0, 10)}), what was reconciled:
          </p>
          <DiffView diff={part} label={label} />
        </>
      );
    }
  }
  if (file.neverReconciled) {
    return (
      <p className="empty-inline">
        The same as {base}, and never reconciled: there is no earlier reviewed version to compare it
        with. Review the file as it is.
      </p>
    );
  }
  return (
    <p className="empty-inline">
      The same as {base}
      {snapshotCommit !== null ? ' and as the snapshot’s commit' : ''}; it was reconciled at other
      content, which is not kept (only its hash), so there is nothing to compare with. Review the
      file as it is.
    </p>
  );
}
