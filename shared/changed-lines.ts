// The change between two texts as the lines that differ, with a little context: everything from
// the first line that differs to the last one, as one hunk. Exact for any two texts (never
// minimal when they differ in two far-apart places: the lines between count as changed), which
// is what a preview of one edit needs — Grove's edits (a client config entry, a decision added to
// a spec) each change one span. Used by the window (the Connect tab's writers) and the worktree
// process (the preview of an accepted decision). No Node or DOM imports: part of the contract.

export interface ChangedLines {
  /**
   * The hunk's lines: " " context, "-" removed, "+" added, each last line without a newline
   * followed by git's "\\ No newline at end of file" (no header, no final newline).
   */
  lines: string[];
  /** 1-based first line of the hunk in `before` and in `after`, and its length in each. */
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
}

/** Marks a last line that has no newline (it differs from the same text with one). */
const NO_EOL = '\u0000';
export const NO_NEWLINE_MARK = '\\ No newline at end of file';

/** The lines of `text` (CRLF read as LF); an empty text has none. */
function linesOf(text: string): string[] {
  if (text === '') return [];
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  // The final newline ends the last line; a last line without one is marked.
  if (lines.at(-1) === '') lines.pop();
  else lines[lines.length - 1] += NO_EOL;
  return lines;
}

/** A hunk line: its text, and git's mark after a last line without a newline. */
function hunkLines(prefix: string, lines: string[]): string[] {
  return lines.flatMap((line) =>
    line.endsWith(NO_EOL)
      ? [`${prefix}${line.slice(0, -1)}`, NO_NEWLINE_MARK]
      : [`${prefix}${line}`],
  );
}

/** The span that differs between `before` and `after`, with `context` lines around it. */
export function changedLines(before: string, after: string, context = 3): ChangedLines {
  const a = linesOf(before);
  const b = linesOf(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const from = Math.max(0, start - context);
  const trailing = Math.min(context, a.length - endA);
  const lines = [
    ...hunkLines(' ', a.slice(from, start)),
    ...hunkLines('-', a.slice(start, endA)),
    ...hunkLines('+', b.slice(start, endB)),
    ...hunkLines(' ', a.slice(endA, endA + trailing)),
  ];
  const oldCount = endA - from + trailing;
  const newCount = endB - from + trailing;
  return {
    lines,
    // A unified diff numbers an empty side's hunk from the line before it.
    oldStart: oldCount === 0 ? from : from + 1,
    oldCount,
    newStart: newCount === 0 ? from : from + 1,
    newCount,
  };
}

/** A hunk header's range as git writes it: "start,count", or "start" for one line. */
function range(start: number, count: number): string {
  return count === 1 ? String(start) : `${start},${count}`;
}

/** `before` → `after` of the file `path` as a unified diff (`--- a/`, `+++ b/`, one hunk). */
export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  if (before.replace(/\r\n/g, '\n') === after.replace(/\r\n/g, '\n')) return '';
  const hunk = changedLines(before, after, context);
  return [
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${range(hunk.oldStart, hunk.oldCount)} +${range(hunk.newStart, hunk.newCount)} @@`,
    ...hunk.lines,
  ].join('\n');
}
