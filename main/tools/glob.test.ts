// The glob semantics shared with the reconciliation tools: segments, `**`, dotfiles, case.
import { describe, expect, it } from 'vitest';
import { compileGlobArgument } from './glob.ts';
import { UserError } from '../platform/errors.ts';

const matches = (pattern: string, path: string): boolean =>
  compileGlobArgument([pattern], 'p')(path);

describe('compileGlobArgument', () => {
  it('keeps * and ? within one segment', () => {
    expect(matches('*.ts', 'a.ts')).toBe(true);
    expect(matches('*.ts', 'src/a.ts')).toBe(false);
    expect(matches('src/*', 'src/a.ts')).toBe(true);
    expect(matches('src/*', 'src/deep/a.ts')).toBe(false);
    expect(matches('src/?.ts', 'src/a.ts')).toBe(true);
    expect(matches('src/?.ts', 'src/ab.ts')).toBe(false);
  });

  it('lets ** span any number of segments, including none', () => {
    expect(matches('**/*.ts', 'a.ts')).toBe(true);
    expect(matches('**/*.ts', 'x/y/z/a.ts')).toBe(true);
    expect(matches('docs/**', 'docs/a.md')).toBe(true);
    expect(matches('docs/**', 'docs/deep/er/a.md')).toBe(true);
    expect(matches('docs/**', 'documents/a.md')).toBe(false);
    expect(matches('src/**/test/*.ts', 'src/test/a.ts')).toBe(true);
    expect(matches('src/**/test/*.ts', 'src/a/b/test/a.ts')).toBe(true);
  });

  it('matches dotfiles and dot directories', () => {
    expect(matches('*', '.env')).toBe(true);
    expect(matches('**/*.yaml', '.notarai/system.spec.yaml')).toBe(true);
    expect(matches('**', '.github/workflows/ci.yml')).toBe(true);
  });

  it('is case-sensitive, supports braces, and reads a leading ./ as the root', () => {
    expect(matches('*.TS', 'a.ts')).toBe(false);
    expect(matches('**/{README,CHANGELOG}.md', 'pkg/CHANGELOG.md')).toBe(true);
    expect(matches('./src/*.ts', 'src/a.ts')).toBe(true);
    expect(matches('src/[ab].ts', 'src/b.ts')).toBe(true);
  });

  it('accepts any of several patterns, none matches nothing', () => {
    const either = compileGlobArgument(['*.md', 'src/**'], 'p');
    expect(either('README.md')).toBe(true);
    expect(either('src/x/y.ts')).toBe(true);
    expect(either('lib/y.ts')).toBe(false);
    expect(compileGlobArgument([], 'p')('anything')).toBe(false);
  });

  it('refuses empty and over-long patterns with the argument named', () => {
    expect(() => compileGlobArgument([''], 'include')).toThrow(UserError);
    expect(() => compileGlobArgument([''], 'include')).toThrow(/include: a glob pattern is empty/);
    expect(() => compileGlobArgument(['a'.repeat(1001)], 'exclude')).toThrow(/exclude: .* longer/);
  });
});
