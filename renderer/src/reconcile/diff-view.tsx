// A unified diff, shown as text with each line coloured by its kind (file header, hunk, added,
// removed, context) through CSS classes. Lines are React text nodes: nothing is parsed as HTML.
import { diffLineKind } from './reconcile-format.ts';

/** Lines shown at most; a longer diff says how many were left out. */
const MAX_LINES = 4000;

export function DiffView({ diff, label }: { diff: string; label: string }) {
  const lines = diff.replace(/\n$/, '').split('\n');
  const shown = lines.slice(0, MAX_LINES);
  return (
    <>
      <pre className="code-block diff" aria-label={label} tabIndex={0}>
        {shown.map((line, index) => (
          <span key={index} className={`diff__line diff__line--${diffLineKind(line)}`}>
            {line}
            {'\n'}
          </span>
        ))}
      </pre>
      {lines.length > shown.length && (
        <p className="muted">
          {lines.length - shown.length} more lines not shown (the diff has {lines.length}).
        </p>
      )}
    </>
  );
}
