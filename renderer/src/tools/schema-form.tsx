// The Tools tab's form: one field per argument of a tool's input schema (text, number, a yes/no
// choice, a list of options, a list of lines, or JSON for anything richer), as the MCP Inspector
// offers. It edits the same JSON the text box beside it shows: the JSON is the truth, the form a
// view of it, so either can be used and a call can still be sent that the schema would refuse.
import { useId } from 'react';

type Schema = Record<string, unknown>;

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'lines' | 'json';

export interface FormField {
  name: string;
  kind: FieldKind;
  required: boolean;
  description: string | null;
  /** The choices of an `enum` field. */
  options: unknown[];
}

const isObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The schema without a `null` alternative (zod writes `.nullable()` as anyOf [X, null]). */
function withoutNull(schema: Schema): Schema {
  const anyOf = schema['anyOf'];
  if (!Array.isArray(anyOf)) return schema;
  const others = anyOf.filter((item) => !(isObject(item) && item['type'] === 'null'));
  return others.length === 1 && isObject(others[0]) ? others[0] : schema;
}

/** The fields of an object schema, in the schema's order; [] for anything else. */
export function formFields(inputSchema: unknown): FormField[] {
  if (!isObject(inputSchema) || !isObject(inputSchema['properties'])) return [];
  const required = Array.isArray(inputSchema['required']) ? inputSchema['required'] : [];
  return Object.entries(inputSchema['properties']).map(([name, raw]) => {
    const schema = isObject(raw) ? withoutNull(raw) : {};
    const description = typeof schema['description'] === 'string' ? schema['description'] : null;
    const items = isObject(schema['items']) ? schema['items'] : {};
    const kind: FieldKind = Array.isArray(schema['enum'])
      ? 'enum'
      : schema['type'] === 'string' ||
          schema['type'] === 'number' ||
          schema['type'] === 'integer' ||
          schema['type'] === 'boolean'
        ? schema['type']
        : schema['type'] === 'array' && items['type'] === 'string'
          ? 'lines'
          : 'json';
    return {
      name,
      kind,
      required: required.includes(name),
      description,
      options: Array.isArray(schema['enum']) ? schema['enum'] : [],
    };
  });
}

/**
 * The arguments with one field set from what was typed in it: an empty field leaves the argument
 * out; a number field that is not a number, or a JSON field that does not parse, keeps the text as
 * it is (the schema check then says what is wrong).
 */
export function withField(
  args: Record<string, unknown>,
  field: FormField,
  typed: string,
): Record<string, unknown> {
  const next = { ...args };
  if (typed === '') {
    delete next[field.name];
    return next;
  }
  switch (field.kind) {
    case 'number':
    case 'integer':
      next[field.name] = Number.isNaN(Number(typed)) ? typed : Number(typed);
      break;
    case 'boolean':
      next[field.name] = typed === 'true';
      break;
    case 'enum':
      next[field.name] = field.options[Number(typed)];
      break;
    case 'lines':
      next[field.name] = typed.split('\n').filter((line) => line !== '');
      break;
    case 'json':
      try {
        next[field.name] = JSON.parse(typed) as unknown;
      } catch {
        next[field.name] = typed;
      }
      break;
    default:
      next[field.name] = typed;
  }
  return next;
}

/** What a field shows for the current value of its argument. */
export function fieldText(field: FormField, value: unknown): string {
  if (value === undefined) return '';
  switch (field.kind) {
    case 'boolean':
      return value === true ? 'true' : value === false ? 'false' : '';
    case 'enum': {
      const index = field.options.findIndex((option) => option === value);
      return index < 0 ? '' : String(index);
    }
    case 'lines':
      return Array.isArray(value) ? value.map(String).join('\n') : JSON.stringify(value);
    case 'json':
      return typeof value === 'string' ? value : JSON.stringify(value);
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

export function SchemaForm({
  fields,
  args,
  disabledReason,
  onChange,
}: {
  fields: FormField[];
  /** The arguments the JSON holds (null when it is not a JSON object). */
  args: Record<string, unknown> | null;
  /** Why the form cannot be used now (the JSON does not parse), or null. */
  disabledReason: string | null;
  onChange(args: Record<string, unknown>): void;
}) {
  const legendId = useId();
  const noteId = useId();
  if (fields.length === 0) return null;
  return (
    <fieldset
      className="schema-form"
      aria-labelledby={legendId}
      aria-describedby={disabledReason ? noteId : undefined}
      disabled={disabledReason !== null}
    >
      <legend id={legendId}>Arguments</legend>
      {disabledReason && (
        <p id={noteId} className="muted">
          {disabledReason}
        </p>
      )}
      {fields.map((field) => (
        <Field
          key={field.name}
          field={field}
          value={fieldText(field, args?.[field.name])}
          onChange={(typed) => onChange(withField(args ?? {}, field, typed))}
        />
      ))}
    </fieldset>
  );
}

function Field({
  field,
  value,
  onChange,
}: {
  field: FormField;
  value: string;
  onChange(typed: string): void;
}) {
  const id = useId();
  const helpId = useId();
  const label = (
    <label htmlFor={id} className="schema-form__label">
      <code>{field.name}</code>
      {field.required ? <span className="muted"> (required)</span> : null}
    </label>
  );
  const common = {
    id,
    'aria-describedby': field.description ? helpId : undefined,
    'aria-required': field.required || undefined,
  };
  let control;
  if (field.kind === 'boolean' || field.kind === 'enum') {
    control = (
      <select
        {...common}
        className="input"
        value={value}
        onChange={(event) => onChange(event.target.value)}
      >
        <option value="">(not set)</option>
        {field.kind === 'boolean' ? (
          <>
            <option value="true">true</option>
            <option value="false">false</option>
          </>
        ) : (
          field.options.map((option, index) => (
            <option key={index} value={String(index)}>
              {JSON.stringify(option)}
            </option>
          ))
        )}
      </select>
    );
  } else if (field.kind === 'lines' || field.kind === 'json') {
    control = (
      <textarea
        {...common}
        className="textarea"
        spellCheck={false}
        rows={Math.min(6, Math.max(2, value.split('\n').length))}
        value={value}
        placeholder={field.kind === 'lines' ? 'one per line' : 'JSON'}
        onChange={(event) => onChange(event.target.value)}
      />
    );
  } else {
    control = (
      <input
        {...common}
        className="input"
        type={field.kind === 'string' ? 'text' : 'number'}
        spellCheck={false}
        value={value}
        onChange={(event) => onChange(event.target.value)}
      />
    );
  }
  return (
    <div className="schema-form__field">
      {label}
      {control}
      {field.description && (
        <p id={helpId} className="schema-form__help muted">
          {field.description}
        </p>
      )}
    </div>
  );
}
