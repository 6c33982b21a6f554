// shared/changed-lines.ts (it needs Node and git to be checked, so the test lives here, beside
// the preview of an accepted decision that uses it, main/reconcile/notarai07/decision-review.ts):
// the one-hunk unified diff of two texts against git's own (`git diff --no-index -U3`) for edits
// of one span: an entry appended to a list, lines inserted, replaced, removed, a section added at
// the end of a file with and without a final newline, a file created. Its hunk header and lines
// must be git's, so the preview of an accepted decision reads like any diff in the window.
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../testing/temp-repo.ts';
import { changedLines, unifiedDiff } from '../../shared/changed-lines.ts';

let dir = '';
beforeAll(async () => {
  dir = await makeTempDir();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/**
 * git's diff of the two texts, from its first `@@` (headers differ: temp file names), without
 * the hunk header's "function" context (a guess at the enclosing definition git adds after it).
 */
async function gitDiff(before: string, after: string): Promise<string> {
  await writeFile(path.join(dir, 'a'), before);
  await writeFile(path.join(dir, 'b'), after);
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      'git',
      ['diff', '--no-index', '--no-color', '-U3', 'a', 'b'],
      { cwd: dir },
      (error, out) =>
        error && (error as { code?: number }).code !== 1 ? reject(error) : resolve(out),
    );
  });
  return stdout
    .slice(stdout.indexOf('@@'))
    .replace(/^(@@ [^@]* @@).*$/gm, '$1')
    .replace(/\n$/, '');
}

const lines = (count: number, from = 1) =>
  Array.from({ length: count }, (_, index) => `line ${index + from}`).join('\n') + '\n';

const CASES: [string, string, string][] = [
  ['an entry appended in the middle', lines(20), lines(10) + 'new a\nnew b\n' + lines(10, 11)],
  ['lines replaced', lines(12), lines(5) + 'changed 6\nchanged 7\n' + lines(5, 8)],
  ['lines removed', lines(12), lines(4) + lines(4, 9)],
  ['a section added at the end', lines(6), lines(6) + 'decisions:\n  - x\n'],
  ['a last line without a newline', lines(6).slice(0, -1), lines(6) + 'decisions:\n'],
  ['an edit near the top', lines(8), 'first\n' + lines(8)],
  ['a file created', '', 'only line\n'],
];

describe('unifiedDiff', () => {
  it.each(CASES)('matches git for %s', async (_name, before, after) => {
    const ours = unifiedDiff('spec.yaml', before, after);
    expect(ours.split('\n').slice(0, 2)).toEqual(['--- a/spec.yaml', '+++ b/spec.yaml']);
    expect(ours.split('\n').slice(2).join('\n')).toBe(await gitDiff(before, after));
  });

  it('is empty for equal texts, and the bare lines keep the context asked for', () => {
    expect(unifiedDiff('x', lines(3), lines(3))).toBe('');
    const hunk = changedLines(lines(10), lines(5) + 'new\n' + lines(5, 6), 2);
    expect(hunk.lines).toEqual([' line 4', ' line 5', '+new', ' line 6', ' line 7']);
    expect(hunk).toMatchObject({ oldStart: 4, oldCount: 4, newStart: 4, newCount: 5 });
  });
});
