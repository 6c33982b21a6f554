import { describe, expect, it } from 'vitest';
import { UserError } from '../platform/errors.ts';

describe('UserError', () => {
  it('keeps its message and is recognisable', () => {
    const error = new UserError('path escapes the worktree: ../x');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('UserError');
    expect(error.message).toBe('path escapes the worktree: ../x');
  });
});
