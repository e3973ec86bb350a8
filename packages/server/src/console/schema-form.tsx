// Forms generated from a JSON Schema, and the value read back from what a person typed (docs/console.md, decision
// 0360): one generator for a tool's dry run (its model-facing parameters) and an interaction's start form (its
// inputs). Strings, numbers and integers are inputs, booleans and enums selects, an object with properties a
// fieldset of its own fields, and anything else (arrays, free objects, unions of types) a JSON text area. A field
// that must be given says "required" in its label. Nothing here runs in the browser: the CSP allows no inline script.

import type { JSX } from 'preact';

type Schema = Record<string, unknown>;

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The kind of field a schema is shown as. */
export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'object' | 'json';

/** The JSON types a schema accepts, `null` apart; and whether it accepts null. */
function typesOf(schema: Schema): { types: string[]; nullable: boolean } {
  const raw = schema.type;
  const all = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.filter((t) => typeof t === 'string') : [];
  const enumNull = Array.isArray(schema.enum) && schema.enum.includes(null);
  return { types: all.filter((t) => t !== 'null'), nullable: all.includes('null') || enumNull };
}

/** How `schema` is shown. */
export function fieldKind(schema: Schema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.some((v) => v !== null)) return 'enum';
  if ('anyOf' in schema || 'oneOf' in schema || 'allOf' in schema) return 'json';
  const { types } = typesOf(schema);
  if (types.length !== 1) return 'json';
  const [type] = types;
  if (type === 'object')
    return isObject(schema.properties) && Object.keys(schema.properties).length > 0 ? 'object' : 'json';
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') return type;
  return 'json';
}

/** A field's form name: `prefix` and its JSON pointer (`/request/amount`, `~1` for a `/` in a key). */
export function fieldName(prefix: string, path: string[]): string {
  return `${prefix}${path.map((p) => `/${p.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')}`;
}

/** A field's element id: its name with every character an id or a CSS selector would stumble on as `-`. */
export function fieldId(prefix: string, path: string[]): string {
  return `f-${fieldName(prefix, path).replace(/[^A-Za-z0-9_-]/g, '-')}`;
}

/** Whether a property must be given: listed in `required` and not accepting null (optional ones are nullable). */
function mustGive(parent: Schema, key: string, schema: Schema): boolean {
  const required = Array.isArray(parent.required) && parent.required.includes(key);
  return required && !typesOf(schema).nullable;
}

function label(path: string[], schema: Schema): string {
  return typeof schema.title === 'string' ? schema.title : (path[path.length - 1] ?? 'value');
}

/** The form's values as typed (by field name) and the messages of the fields refused. */
export interface FormState {
  values?: Record<string, string | undefined>;
  errors?: Record<string, string>;
}

function Field(props: {
  prefix: string;
  path: string[];
  schema: Schema;
  required: boolean;
  /** Whether every enclosing object must be given too: only then is the browser told the field is required. */
  chainRequired: boolean;
  state: FormState;
}) {
  const { prefix, path, schema, required, state } = props;
  const kind = fieldKind(schema);
  const name = fieldName(prefix, path);
  const id = fieldId(prefix, path);
  const value = state.values?.[name];
  const error = state.errors?.[name];
  const description = typeof schema.description === 'string' ? schema.description : undefined;
  if (kind === 'object') {
    const properties = schema.properties as Record<string, unknown>;
    return (
      <fieldset class="schema-object">
        <legend>
          {label(path, schema)} {required ? <span class="required">(required)</span> : null}
        </legend>
        {description ? <p class="hint">{description}</p> : null}
        {Object.entries(properties).map(([key, child]) =>
          isObject(child) ? (
            <Field
              prefix={prefix}
              path={[...path, key]}
              schema={child}
              required={mustGive(schema, key, child)}
              chainRequired={props.chainRequired && required && mustGive(schema, key, child)}
              state={state}
            />
          ) : null,
        )}
      </fieldset>
    );
  }
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [description ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name,
    'aria-describedby': describedBy,
    'aria-invalid': error ? ('true' as const) : undefined,
    required: props.chainRequired && required ? true : undefined,
  };
  const typeWord =
    kind === 'json'
      ? Array.isArray(schema.items) || typesOf(schema).types.includes('array')
        ? 'JSON array'
        : 'JSON'
      : kind === 'enum'
        ? 'one of'
        : kind;
  let control: JSX.Element;
  if (kind === 'enum' || kind === 'boolean') {
    const options = kind === 'boolean' ? [true, false] : (schema.enum as unknown[]).filter((v) => v !== null);
    control = (
      <select {...common}>
        {required ? null : <option value="">(not given)</option>}
        {options.map((o) => {
          const v = JSON.stringify(o);
          return (
            <option value={v} selected={value === v}>
              {typeof o === 'string' ? o : v}
            </option>
          );
        })}
      </select>
    );
  } else if (kind === 'json') {
    control = (
      <textarea {...common} rows={3} class="json-input">
        {value ?? ''}
      </textarea>
    );
  } else {
    const shownValue =
      value ?? (typeof schema.default === 'string' || typeof schema.default === 'number' ? String(schema.default) : '');
    control =
      kind === 'number' || kind === 'integer' ? (
        <input
          {...common}
          type="number"
          step={kind === 'integer' ? '1' : 'any'}
          inputmode={kind === 'integer' ? 'numeric' : 'decimal'}
          min={typeof schema.minimum === 'number' ? schema.minimum : undefined}
          max={typeof schema.maximum === 'number' ? schema.maximum : undefined}
          value={shownValue}
        />
      ) : (
        <input
          {...common}
          type="text"
          maxlength={typeof schema.maxLength === 'number' ? schema.maxLength : undefined}
          value={shownValue}
        />
      );
  }
  return (
    <div class="field">
      <label for={id}>
        {label(path, schema)} <span class="type">({typeWord})</span>
        {required ? <span class="required"> required</span> : null}
      </label>
      {control}
      {description ? (
        <small id={hintId} class="hint">
          {description}
        </small>
      ) : null}
      {error ? (
        <small id={errorId} class="error">
          {error}
        </small>
      ) : null}
    </div>
  );
}

/** The fields of an object schema's properties (the top object itself is not a fieldset). */
export function SchemaFields(props: { schema: unknown; prefix: string; state?: FormState }) {
  const schema = isObject(props.schema) ? props.schema : {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  const state = props.state ?? {};
  if (Object.keys(properties).length === 0) return <p>It takes no arguments.</p>;
  return (
    <>
      {Object.entries(properties).map(([key, child]) =>
        isObject(child) ? (
          <Field
            prefix={props.prefix}
            path={[key]}
            schema={child}
            required={mustGive(schema, key, child)}
            chainRequired={mustGive(schema, key, child)}
            state={state}
          />
        ) : null,
      )}
    </>
  );
}

/** What a form gave: the value (an object), the typed texts by field name, and the refused fields' messages. */
export interface ReadForm {
  value: Record<string, unknown>;
  values: Record<string, string>;
  errors: Record<string, string>;
}

/**
 * Reads an object schema's value from a posted form: an empty field is not given (an optional object with nothing
 * given is left out), a required one left empty, a number that is not one, a JSON text that does not parse are
 * refused by field. Anything the schema says beyond the field's type (a pattern, a range) is left to whoever
 * receives the value (the gateway, the engine), which refuses it with its own error.
 */
export function readSchemaForm(schema: unknown, form: Record<string, unknown>, prefix: string): ReadForm {
  const values: Record<string, string> = {};
  const errors: Record<string, string> = {};
  const text = (name: string): string => {
    const raw = form[name];
    const v = typeof raw === 'string' ? raw : Array.isArray(raw) && typeof raw[0] === 'string' ? raw[0] : '';
    if (v !== '') values[name] = v;
    return v;
  };
  // undefined: not given.
  const read = (s: Schema, path: string[], required: boolean): unknown => {
    const kind = fieldKind(s);
    const name = fieldName(prefix, path);
    if (kind === 'object') {
      const out: Record<string, unknown> = {};
      const before = Object.keys(errors).length;
      for (const [key, child] of Object.entries(s.properties as Record<string, unknown>)) {
        if (!isObject(child)) continue;
        const v = read(child, [...path, key], mustGive(s, key, child));
        if (v !== undefined) out[key] = v;
      }
      if (Object.keys(out).length === 0 && !required) {
        // Nothing given in an optional object: its children's "required" do not hold.
        for (const key of Object.keys(errors).slice(before)) delete errors[key];
        return undefined;
      }
      return out;
    }
    const raw = text(name);
    if (raw.trim() === '') {
      if (required) errors[name] = `${label(path, s)} is required.`;
      return undefined;
    }
    switch (kind) {
      case 'string':
        return raw;
      case 'number':
      case 'integer': {
        const n = Number(raw);
        if (!Number.isFinite(n) || (kind === 'integer' && !Number.isInteger(n))) {
          errors[name] = `${label(path, s)} takes ${kind === 'integer' ? 'a whole number' : 'a number'}, not "${raw}".`;
          return undefined;
        }
        return n;
      }
      case 'boolean':
      case 'enum':
        try {
          return JSON.parse(raw);
        } catch {
          errors[name] = `${label(path, s)}: choose one of the list.`;
          return undefined;
        }
      default:
        try {
          return JSON.parse(raw);
        } catch (error) {
          errors[name] = `${label(path, s)} is not JSON: ${(error as Error).message}`;
          return undefined;
        }
    }
  };
  const top = isObject(schema) ? schema : {};
  const value: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(isObject(top.properties) ? top.properties : {})) {
    if (!isObject(child)) continue;
    const v = read(child, [key], mustGive(top, key, child));
    if (v !== undefined) value[key] = v;
  }
  return { value, values, errors };
}
