// The pieces of the command dispatcher that are not the host's: `~` in a repository path.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandHome } from './host-commands.ts';

describe('expandHome', () => {
  it('expands ~ and ~/x as a shell would, and nothing else', () => {
    expect(expandHome('~', '/home/me')).toBe('/home/me');
    expect(expandHome('~/src/app', '/home/me')).toBe(path.join('/home/me', 'src/app'));
    expect(expandHome('~other/x', '/home/me')).toBe('~other/x');
    expect(expandHome('/srv/~/x', '/home/me')).toBe('/srv/~/x');
    expect(expandHome('relative/~', '/home/me')).toBe('relative/~');
  });
});
