// Activity's list of finished calls, windowed: the list scrolls in a box of its own (so the filters
// above it stay in view) and only the rows in sight, plus a few either side, are in the DOM — every
// row has the same height (one line; long arguments end in "…"), so which rows are in sight is
// arithmetic. 1,000 calls draw as ~30 rows. The list is one Tab stop (a roving tabindex); arrow
// keys, Page Up/Down, Home and End move between calls, scrolling the one reached into view; Enter
// or Space opens its details. Why hand-rolled rather than a library: docs/decisions.md.
import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { ActivityEntry } from '../../../shared/model.ts';
import { duration, timeOfDay } from '../common/format.ts';

/** A row's height in CSS pixels: .calls--windowed .call in tables.css says the same. */
export const CALL_ROW_HEIGHT = 34;
/** Rows drawn beyond each edge of the box, so a fast scroll never shows a gap. */
const OVERSCAN = 10;
/** The box's height before it is measured (a first paint draws this many rows' worth). */
const INITIAL_HEIGHT = 600;

export function CallList({
  calls,
  selectedId,
  onSelect,
}: {
  calls: readonly ActivityEntry[];
  selectedId: string | null;
  onSelect(id: string | null): void;
}) {
  const boxRef = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: INITIAL_HEIGHT });
  // The row the list's Tab stop is on (the last one focused), and one to focus once it is drawn.
  const [current, setCurrent] = useState(0);
  const pendingFocus = useRef<number | null>(null);

  useEffect(() => {
    const box = boxRef.current;
    if (!box) return;
    const measure = (): void => setView({ top: box.scrollTop, height: box.clientHeight });
    measure();
    box.addEventListener('scroll', measure, { passive: true });
    const observer = new ResizeObserver(measure);
    observer.observe(box);
    return () => {
      box.removeEventListener('scroll', measure);
      observer.disconnect();
    };
  }, []);

  useLayoutEffect(() => {
    if (pendingFocus.current === null) return;
    boxRef.current?.querySelector<HTMLElement>(`[data-index="${pendingFocus.current}"]`)?.focus();
    pendingFocus.current = null;
  });

  // A shorter list (a search) pulls the box's scroll back before its scroll event says so.
  const top = Math.max(0, Math.min(view.top, calls.length * CALL_ROW_HEIGHT - view.height));
  const first = Math.max(0, Math.floor(top / CALL_ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(calls.length, Math.ceil((top + view.height) / CALL_ROW_HEIGHT) + OVERSCAN);
  // The Tab stop: the current row while it is drawn, else the first row in sight.
  const tabStop =
    current >= first && current < last
      ? current
      : Math.min(calls.length - 1, Math.floor(top / CALL_ROW_HEIGHT));

  /** Brings row `index` into the box, scrolling as little as needed, and focuses it. */
  const moveTo = (index: number): void => {
    const box = boxRef.current;
    if (!box) return;
    const target = Math.max(0, Math.min(calls.length - 1, index));
    const top = target * CALL_ROW_HEIGHT;
    if (top < box.scrollTop) box.scrollTop = top;
    else if (top + CALL_ROW_HEIGHT > box.scrollTop + box.clientHeight) {
      box.scrollTop = top + CALL_ROW_HEIGHT - box.clientHeight;
    }
    pendingFocus.current = target;
    setCurrent(target);
    setView({ top: box.scrollTop, height: box.clientHeight });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLOListElement>): void => {
    const at = Number((document.activeElement as HTMLElement | null)?.dataset['index'] ?? NaN);
    if (Number.isNaN(at)) return;
    const page = Math.max(1, Math.floor((boxRef.current?.clientHeight ?? 0) / CALL_ROW_HEIGHT) - 1);
    const steps: Record<string, number> = {
      ArrowDown: at + 1,
      ArrowUp: at - 1,
      PageDown: at + page,
      PageUp: at - page,
      Home: 0,
      End: calls.length - 1,
    };
    const next = steps[event.key];
    if (next === undefined) return;
    event.preventDefault();
    moveTo(next);
  };

  return (
    <div ref={boxRef} className="calls-box">
      <ol
        className="calls calls--windowed"
        aria-label="Tool calls"
        style={{ height: calls.length * CALL_ROW_HEIGHT }}
        onKeyDown={onKeyDown}
      >
        {calls.slice(first, last).map((entry, offset) => {
          const index = first + offset;
          const selected = entry.id === selectedId;
          return (
            <li
              key={entry.id}
              style={{ top: index * CALL_ROW_HEIGHT }}
              aria-setsize={calls.length}
              aria-posinset={index + 1}
            >
              <button
                type="button"
                data-index={index}
                tabIndex={index === tabStop ? 0 : -1}
                onFocus={() => setCurrent(index)}
                className={selected ? 'call call--selected' : 'call'}
                aria-pressed={selected}
                onClick={() => onSelect(selected ? null : entry.id)}
              >
                <span
                  className={entry.ok ? 'call__ok' : 'call__failed'}
                  aria-label={entry.ok ? 'succeeded' : 'failed'}
                >
                  {entry.ok ? '✓' : '✕'}
                </span>
                <span className="call__time">{timeOfDay(entry.at)}</span>
                <span className="call__tool" title={entry.tool}>
                  {entry.tool}
                </span>
                <span className="call__client" title={entry.clientName}>
                  {entry.clientName}
                </span>
                <code className="call__args">{entry.argumentsSummary}</code>
                <span className="call__duration">{duration(entry.durationMs)}</span>
              </button>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
