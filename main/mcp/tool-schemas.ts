// A tool's schemas as the SDK meets them: converted to JSON Schema once per process (not once per
// server: the modern leg builds one per request), in the portable subset strict clients accept,
// and validated in a turn of the event loop of their own; arguments the input schema refuses are
// handed to the handler as RefusedArguments, so the call is recorded like any other
// (server-factory.ts).
import { nextSlice, sliceUsedUp } from '../platform/time-slices.ts';
import { stageMark } from '../platform/stage-timings.ts';

type JsonSchemaObject = Record<string, unknown>;
interface StandardJsonSchemaProps {
  validate: (value: unknown) => unknown;
  jsonSchema?: Record<'input' | 'output', (options: { target: string }) => JsonSchemaObject>;
}

type StandardIssue = { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] };
type StandardResult = { value?: unknown; issues?: readonly StandardIssue[] };

/** An issue as the SDK words it in its own refusal ("path.to.key: message"). */
function formatIssue(issue: StandardIssue): string {
  if (!issue.path?.length) return issue.message;
  const keys = issue.path.map((part) => String(typeof part === 'object' ? part.key : part));
  return `${keys.join('.')}: ${issue.message}`;
}

/**
 * Arguments that failed the tool's input schema. The SDK would refuse such a call before any
 * handler runs, and nothing would list it; the schema hands this to the handler instead, which
 * records the call (Activity, the client's Calls count) and answers with the SDK's own message.
 */
export class RefusedArguments {
  readonly raw: unknown;
  readonly issues: string;
  constructor(raw: unknown, issues: string) {
    this.raw = raw;
    this.issues = issues;
  }
}

/**
 * zod's JSON Schema, in the subset strict clients accept (the MCP Inspector's --strict checks,
 * Gemini, OpenAI-style strict function schemas; main/mcp/schema-portability.test.ts):
 * - "any further keys allowed" (a record of unknown values) is `additionalProperties: {}`, an
 *   empty schema they warn on: spelled `true`, which means the same in every dialect;
 * - `.nullable()` is `type: ["string", "null"]`, a type array they refuse: written as
 *   `anyOf: [{type: "string", ...}, {type: "null"}]`, which means the same.
 * Returns the same object, changed in place (the conversion's output is ours).
 */
export function portableJsonSchema(json: JsonSchemaObject): JsonSchemaObject {
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const object = node as Record<string, unknown>;
    const extra = object['additionalProperties'];
    if (
      extra !== null &&
      typeof extra === 'object' &&
      !Array.isArray(extra) &&
      Object.keys(extra).length === 0
    ) {
      object['additionalProperties'] = true;
    }
    const type = object['type'];
    if (Array.isArray(type) && type.length === 2 && type.includes('null')) {
      // Annotations stay on the whole; the rest describes the non-null alternative.
      const { type: _types, description, title, default: fallback, ...rest } = object;
      for (const key of Object.keys(object)) delete object[key];
      Object.assign(
        object,
        description === undefined ? {} : { description },
        title === undefined ? {} : { title },
        fallback === undefined ? {} : { default: fallback },
      );
      object['anyOf'] = [{ ...rest, type: type.find((name) => name !== 'null') }, { type: 'null' }];
    }
    for (const value of Object.values(object)) visit(value);
  };
  visit(json);
  return json;
}

/**
 * The schema, with its JSON Schema conversion done once per process instead of once per server.
 * The SDK converts a tool's schemas through the schema's public Standard JSON Schema interface
 * (`~standard.jsonSchema.input/output`, which zod 4 implements): the modern leg builds a server per
 * request, so without this every modern call would pay zod's conversion (the largest per-call
 * cost measured). The returned object inherits everything else from the zod schema; `jsonSchema`
 * answers from a memo, and `validate` (which the SDK awaits) validates in a turn of the event loop
 * of its own once the current slice is used up: checking a 100,000-file answer takes ~100 ms, and
 * so does the SDK's writing of it that follows (platform/time-slices.ts).
 */
export function withJsonSchemaConvertedOnce<T extends object>(
  schema: T,
  options: { recordRefusals?: boolean } = {},
): T {
  const standard = (schema as { '~standard'?: StandardJsonSchemaProps })['~standard'];
  const convert = standard?.jsonSchema;
  if (standard === undefined || convert === undefined) return schema;
  const memo = new Map<string, JsonSchemaObject>();
  const memoised =
    (io: 'input' | 'output') =>
    (options: { target: string }): JsonSchemaObject => {
      const key = `${io} ${options.target}`;
      let json = memo.get(key);
      if (json === undefined) {
        json = portableJsonSchema(convert[io](options));
        memo.set(key, json);
      }
      return json;
    };
  const wrapped = Object.create(schema) as T;
  const validate = async (value: unknown): Promise<unknown> => {
    if (sliceUsedUp()) await nextSlice();
    stageMark('validating');
    const result = (await standard.validate(value)) as StandardResult;
    stageMark('validated');
    if (sliceUsedUp()) await nextSlice();
    if (options.recordRefusals && result.issues && result.issues.length > 0) {
      // Handed to the tool's handler instead of the SDK's refusal, so the call is recorded.
      return { value: new RefusedArguments(value, result.issues.map(formatIssue).join(', ')) };
    }
    return result;
  };
  Object.defineProperty(wrapped, '~standard', {
    value: {
      ...standard,
      validate,
      jsonSchema: { input: memoised('input'), output: memoised('output') },
    },
  });
  return wrapped;
}
