// The Tools tab's argument checker against the shapes tool input schemas take.
import { describe, expect, test } from 'vitest';
import { checkAgainstSchema, exampleArguments } from './json-schema-check.ts';

const schema = {
  type: 'object',
  properties: {
    path: { type: 'string', minLength: 1 },
    depth: { type: 'integer', minimum: 1, maximum: 5 },
    mode: { enum: ['head', 'tail'] },
    globs: { type: 'array', items: { type: 'string' }, maxItems: 2 },
  },
  required: ['path'],
  additionalProperties: false,
};

describe('checkAgainstSchema', () => {
  test('accepts valid arguments', () => {
    expect(
      checkAgainstSchema({ path: 'src', depth: 2, mode: 'head', globs: ['*.ts'] }, schema),
    ).toEqual([]);
  });

  test('reports each problem with its path', () => {
    const issues = checkAgainstSchema(
      { depth: 1.5, mode: 'middle', globs: ['a', 2, 'c'], extra: true },
      schema,
    );
    expect(issues.map((issue) => issue.path).sort()).toEqual(
      ['/depth', '/extra', '/globs', '/globs/1', '/mode', '/path'].sort(),
    );
    expect(issues.find((issue) => issue.path === '/path')?.message).toBe('"path" is required');
  });

  test('checks the top-level type, anyOf and bounds', () => {
    expect(checkAgainstSchema([], schema)[0]?.message).toMatch(/must be object, not array/);
    const either = { anyOf: [{ type: 'string' }, { type: 'number', minimum: 0 }] };
    expect(checkAgainstSchema(3, either)).toEqual([]);
    expect(checkAgainstSchema(-1, either)).toHaveLength(1);
  });

  test('builds example arguments from the required properties', () => {
    expect(exampleArguments(schema)).toEqual({ path: '' });
    expect(
      exampleArguments({
        type: 'object',
        properties: { n: { type: 'integer', default: 3 } },
        required: ['n'],
      }),
    ).toEqual({ n: 3 });
  });
});
