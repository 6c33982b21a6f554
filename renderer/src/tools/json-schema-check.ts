// A small JSON Schema checker for the Tools tab: validates arguments typed by hand against a tool's
// input schema before they are sent. It covers what tool schemas use (type, properties, required,
// additionalProperties, enum, const, string/number/array bounds, pattern, items, anyOf/oneOf/allOf)
// and no eval, so it runs under the renderer's CSP. The server validates again, authoritatively.

export interface SchemaIssue {
  /** Where, as a JSON pointer-ish path ("" is the whole value, "/path" a property). */
  path: string;
  message: string;
}

type Schema = Record<string, unknown>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

export function checkAgainstSchema(value: unknown, schema: unknown, path = ''): SchemaIssue[] {
  if (schema === true || schema === undefined) return [];
  if (schema === false) return [{ path, message: 'no value is allowed here' }];
  if (!isObject(schema)) return [];
  const s = schema as Schema;
  const issues: SchemaIssue[] = [];
  const at = path || '(arguments)';

  if (s['type'] !== undefined) {
    const types = Array.isArray(s['type']) ? (s['type'] as string[]) : [s['type'] as string];
    if (!types.some((type) => matchesType(value, type))) {
      return [{ path, message: `${at} must be ${types.join(' or ')}, not ${typeOf(value)}` }];
    }
  }
  if (Array.isArray(s['enum']) && !s['enum'].some((option) => deepEqual(option, value))) {
    issues.push({
      path,
      message: `${at} must be one of ${s['enum'].map((option) => JSON.stringify(option)).join(', ')}`,
    });
  }
  if ('const' in s && !deepEqual(s['const'], value)) {
    issues.push({ path, message: `${at} must be ${JSON.stringify(s['const'])}` });
  }

  if (typeof value === 'string') {
    if (typeof s['minLength'] === 'number' && value.length < s['minLength']) {
      issues.push({ path, message: `${at} must have at least ${s['minLength']} characters` });
    }
    if (typeof s['maxLength'] === 'number' && value.length > s['maxLength']) {
      issues.push({ path, message: `${at} must have at most ${s['maxLength']} characters` });
    }
    if (typeof s['pattern'] === 'string') {
      try {
        if (!new RegExp(s['pattern'], 'u').test(value)) {
          issues.push({ path, message: `${at} must match ${s['pattern']}` });
        }
      } catch {
        // A pattern this browser cannot compile: leave it to the server.
      }
    }
  }

  if (typeof value === 'number') {
    if (typeof s['minimum'] === 'number' && value < s['minimum']) {
      issues.push({ path, message: `${at} must be ≥ ${s['minimum']}` });
    }
    if (typeof s['maximum'] === 'number' && value > s['maximum']) {
      issues.push({ path, message: `${at} must be ≤ ${s['maximum']}` });
    }
    if (typeof s['exclusiveMinimum'] === 'number' && value <= s['exclusiveMinimum']) {
      issues.push({ path, message: `${at} must be > ${s['exclusiveMinimum']}` });
    }
    if (typeof s['exclusiveMaximum'] === 'number' && value >= s['exclusiveMaximum']) {
      issues.push({ path, message: `${at} must be < ${s['exclusiveMaximum']}` });
    }
  }

  if (Array.isArray(value)) {
    if (typeof s['minItems'] === 'number' && value.length < s['minItems']) {
      issues.push({ path, message: `${at} must have at least ${s['minItems']} items` });
    }
    if (typeof s['maxItems'] === 'number' && value.length > s['maxItems']) {
      issues.push({ path, message: `${at} must have at most ${s['maxItems']} items` });
    }
    if (s['items'] !== undefined) {
      value.forEach((item, index) => {
        issues.push(...checkAgainstSchema(item, s['items'], `${path}/${index}`));
      });
    }
  }

  if (isObject(value)) {
    const properties = isObject(s['properties']) ? s['properties'] : {};
    if (Array.isArray(s['required'])) {
      for (const key of s['required'] as string[]) {
        if (!(key in value))
          issues.push({ path: `${path}/${key}`, message: `"${key}" is required` });
      }
    }
    for (const [key, item] of Object.entries(value)) {
      if (key in properties) {
        issues.push(...checkAgainstSchema(item, properties[key], `${path}/${key}`));
      } else if (s['additionalProperties'] === false) {
        issues.push({ path: `${path}/${key}`, message: `"${key}" is not a known argument` });
      } else if (isObject(s['additionalProperties'])) {
        issues.push(...checkAgainstSchema(item, s['additionalProperties'], `${path}/${key}`));
      }
    }
  }

  if (Array.isArray(s['allOf'])) {
    for (const part of s['allOf']) issues.push(...checkAgainstSchema(value, part, path));
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const options = s[keyword];
    if (Array.isArray(options) && options.length > 0) {
      const passing = options.filter(
        (option) => checkAgainstSchema(value, option, path).length === 0,
      );
      if (passing.length === 0) {
        issues.push({ path, message: `${at} matches none of the allowed shapes` });
      }
    }
  }
  return issues;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A starting point for the arguments editor: required properties, each with a known good value
 * from `known` when it has one that fits the schema (the worktree's base branch, a file that
 * exists...), else a placeholder.
 */
export function exampleArguments(
  schema: Record<string, unknown>,
  known: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  const example: Record<string, unknown> = {};
  for (const key of required) {
    const property = isObject(properties[key]) ? properties[key] : {};
    const value = Object.hasOwn(known, key) ? known[key] : undefined;
    example[key] =
      value !== undefined && checkAgainstSchema(value, property).length === 0
        ? value
        : placeholder(property);
  }
  return example;
}

function placeholder(schema: Record<string, unknown>): unknown {
  if ('default' in schema) return schema['default'];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  const type = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
  switch (type) {
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return typeof schema['minimum'] === 'number' ? schema['minimum'] : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return null;
  }
}
