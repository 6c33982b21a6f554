// parseStatus on porcelain v2 output: branch headers, renames (two records), conflicts, ignored.
import { describe, expect, it } from 'vitest';
import { parseStatus } from './repository-status.ts';

const records = (...lines: string[]): Buffer =>
  Buffer.from(lines.map((line) => `${line}\0`).join(''));

describe('parseStatus', () => {
  it('reads branch, upstream and every kind of entry', () => {
    const output = records(
      '# branch.oid 0123456789012345678901234567890123456789',
      '# branch.head topic/x y',
      '# branch.upstream origin/topic/x y',
      '# branch.ab +3 -0',
      '1 .M N... 100644 100644 100644 aaaa bbbb src/a b.ts',
      '2 R. N... 100644 100644 100644 aaaa bbbb R100 new name.ts',
      'old name.ts',
      'u UU N... 100644 100644 100644 100644 aaaa bbbb cccc both.ts',
      '? notes/todo.txt',
      '! ignored.log',
    );
    expect(parseStatus(output, 10)).toEqual({
      branch: 'topic/x y',
      upstream: { name: 'origin/topic/x y', ahead: 3, behind: 0 },
      changes: {
        changed: 3,
        staged: 1,
        unstaged: 1,
        conflicted: 1,
        untracked: 1,
        changed_paths: ['src/a b.ts', 'new name.ts', 'both.ts'],
        untracked_paths: ['notes/todo.txt'],
      },
    });
  });

  it('knows a detached HEAD, a gone upstream, and keeps only the first paths', () => {
    const output = records(
      '# branch.oid (initial)',
      '# branch.head (detached)',
      '# branch.upstream origin/gone',
      '? a',
      '? b',
      '? c',
    );
    const parsed = parseStatus(output, 2);
    expect(parsed.branch).toBeNull();
    expect(parsed.upstream).toEqual({ name: 'origin/gone', ahead: null, behind: null });
    expect(parsed.changes.untracked).toBe(3);
    expect(parsed.changes.untracked_paths).toEqual(['a', 'b']);
  });
});
