// The review's file list: a folder tree (counts per folder, folders fold) drawn as a virtualised
// list — only the rows in view are in the DOM, so 20,000 files scroll as smoothly as 20 — with
// each file's status, a "Viewed" checkbox and the selected file highlighted. Keys, on the list:
// j / k or the arrows move between files, Space or v ticks Viewed, Enter or the arrows left and
// right fold and unfold the folder under the cursor.
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { STATUS_LABEL, type TreeRow } from './review-files.ts';

/** Row height in px (the CSS gives every row this height). */
export const ROW_HEIGHT = 28;
/** Rows drawn beyond the visible ones on each side. */
const OVERSCAN = 8;
/** The list's height when it holds more rows than that. */
const MAX_VISIBLE_ROWS = 16;

export interface FileTreeProps {
  rows: readonly TreeRow[];
  selected: string | null;
  viewed: ReadonlySet<string>;
  label: string;
  onSelect(path: string): void;
  onToggleViewed(path: string): void;
  onToggleFolder(path: string): void;
}

export function FileTree({
  rows,
  selected,
  viewed,
  label,
  onSelect,
  onToggleViewed,
  onToggleFolder,
}: FileTreeProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  // The folder the cursor is on (set by clicking or moving onto a folder row), else the file.
  const [cursorFolder, setCursorFolder] = useState<string | null>(null);
  const height = Math.min(rows.length, MAX_VISIBLE_ROWS) * ROW_HEIGHT;
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const cursorIndex = rows.findIndex((row) =>
    cursorFolder !== null
      ? row.kind === 'folder' && row.path === cursorFolder
      : row.kind === 'file' && row.file.path === selected,
  );

  // Keep the cursor's row in view.
  useEffect(() => {
    const element = scroller.current;
    if (!element || cursorIndex < 0) return;
    const top = cursorIndex * ROW_HEIGHT;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + ROW_HEIGHT > element.scrollTop + element.clientHeight) {
      element.scrollTop = top + ROW_HEIGHT - element.clientHeight;
    }
  }, [cursorIndex]);

  const moveTo = (index: number): void => {
    const row = rows[index];
    if (!row) return;
    if (row.kind === 'file') {
      setCursorFolder(null);
      onSelect(row.file.path);
    } else {
      setCursorFolder(row.path);
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>): void => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const row = rows[cursorIndex];
    switch (event.key) {
      case 'ArrowDown':
      case 'j':
        moveTo(cursorIndex < 0 ? 0 : Math.min(rows.length - 1, cursorIndex + 1));
        break;
      case 'ArrowUp':
      case 'k':
        moveTo(cursorIndex < 0 ? 0 : Math.max(0, cursorIndex - 1));
        break;
      case 'Home':
        moveTo(0);
        break;
      case 'End':
        moveTo(rows.length - 1);
        break;
      case ' ':
      case 'v':
        if (row?.kind === 'file' && row.file.markable) onToggleViewed(row.file.path);
        else if (row?.kind === 'folder') onToggleFolder(row.path);
        break;
      case 'Enter':
      case 'ArrowLeft':
      case 'ArrowRight':
        if (row?.kind !== 'folder') return;
        if (event.key === 'Enter' || (event.key === 'ArrowLeft') === row.open) {
          onToggleFolder(row.path);
        }
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  const activeId = cursorIndex >= 0 ? rowId(label, cursorIndex) : undefined;
  return (
    <div
      ref={scroller}
      className="file-tree"
      style={{ height: height + 2 }}
      role="tree"
      aria-label={label}
      aria-activedescendant={activeId}
      tabIndex={0}
      onKeyDown={onKeyDown}
      onScroll={(event) => setScrollTop(event.currentTarget.scrollTop)}
    >
      <div className="file-tree__space" style={{ height: rows.length * ROW_HEIGHT }}>
        {rows.slice(first, last).map((row, offset) => {
          const index = first + offset;
          const style = { top: index * ROW_HEIGHT, paddingLeft: 8 + row.depth * 14 };
          if (row.kind === 'folder') {
            return (
              <div
                key={`d:${row.path}`}
                id={rowId(label, index)}
                className={
                  index === cursorIndex
                    ? 'file-tree__row file-tree__row--folder file-tree__row--cursor'
                    : 'file-tree__row file-tree__row--folder'
                }
                style={style}
                role="treeitem"
                aria-level={row.depth + 1}
                aria-expanded={row.open}
                aria-selected={false}
                aria-posinset={index + 1}
                aria-setsize={rows.length}
                onClick={() => {
                  setCursorFolder(row.path);
                  onToggleFolder(row.path);
                }}
              >
                <span className="file-tree__chevron" aria-hidden="true">
                  {row.open ? '▾' : '▸'}
                </span>
                <span className="file-tree__name">{row.name}/</span>
                <span className="file-tree__count">{row.count.toLocaleString('en-US')}</span>
              </div>
            );
          }
          const { file } = row;
          const isSelected = file.path === selected;
          const status = STATUS_LABEL[file.status];
          return (
            <div
              key={`f:${file.path}`}
              id={rowId(label, index)}
              className={[
                'file-tree__row',
                isSelected ? 'file-tree__row--selected' : '',
                index === cursorIndex ? 'file-tree__row--cursor' : '',
                viewed.has(file.path) ? 'file-tree__row--viewed' : '',
              ]
                .filter(Boolean)
                .join(' ')}
              style={style}
              role="treeitem"
              aria-level={row.depth + 1}
              aria-selected={isSelected}
              aria-posinset={index + 1}
              aria-setsize={rows.length}
              aria-label={`${file.path}, ${status.words}`}
              title={file.from ? `${file.path} (renamed from ${file.from})` : file.path}
              onClick={() => {
                setCursorFolder(null);
                onSelect(file.path);
              }}
            >
              <span
                className={`file-status file-status--${file.status}`}
                aria-hidden="true"
                title={status.words}
              >
                {status.tag}
              </span>
              <span className="file-tree__name">{row.name}</span>
              {file.otherSpecs.length > 0 && (
                <span className="file-tree__shared" title={file.otherSpecs.join(', ')}>
                  shared
                </span>
              )}
              {file.markable && (
                <input
                  type="checkbox"
                  className="file-tree__viewed"
                  aria-label={`Viewed ${file.path}`}
                  title="Viewed"
                  checked={viewed.has(file.path)}
                  tabIndex={-1}
                  onClick={(event) => event.stopPropagation()}
                  onChange={() => onToggleViewed(file.path)}
                />
              )}
            </div>
          );
        })}
      </div>
    </div>
  );
}

function rowId(label: string, index: number): string {
  return `tree-${label.replace(/[^A-Za-z0-9]/g, '-')}-${index}`;
}
