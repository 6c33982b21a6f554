import { describe, expect, it } from 'vitest';
import { ToolError } from './tool-definition.ts';

describe('ToolError', () => {
  it('keeps its message and is recognisable', () => {
    const error = new ToolError('path escapes the worktree: ../x');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ToolError');
    expect(error.message).toBe('path escapes the worktree: ../x');
  });
});
