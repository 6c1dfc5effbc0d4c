/**
 * Forms for the rest of the server: fields generated from a tool's JSON Schema, and text fields
 * with completion as you type (templates' variables, prompts' arguments) through `completion/complete`.
 */
import { useEffect, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import type { JsonSchema } from './data';
import { definedProps } from '../core/defined.js';

export type Values = Record<string, string>;

/** One text field whose suggestions come from `suggest` (debounced). */
export function CompletingField(props: {
  name: string;
  label: string;
  required?: boolean;
  description?: string;
  value: string;
  onChange(value: string): void;
  suggest?: ((value: string) => Promise<string[]>) | undefined;
}): JSX.Element {
  const [options, setOptions] = useState<string[]>([]);
  const listId = `complete-${props.name}`;
  useEffect(() => {
    if (props.suggest === undefined) return undefined;
    let cancelled = false;
    const timer = setTimeout(() => {
      props.suggest?.(props.value).then(
        (values) => !cancelled && setOptions(values.slice(0, 50)),
        () => !cancelled && setOptions([]),
      );
    }, 120);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [props.value]);
  return (
    <label class="field">
      <span>
        {props.label}
        {props.required === true ? ' *' : ''}
      </span>
      <input
        name={props.name}
        value={props.value}
        list={listId}
        required={props.required}
        onInput={(e) => props.onChange((e.currentTarget as HTMLInputElement).value)}
      />
      <datalist id={listId}>
        {options.map((o) => (
          <option key={o} value={o} />
        ))}
      </datalist>
      {props.description === undefined ? null : <small>{props.description}</small>}
    </label>
  );
}

/** Fields for an object schema's properties; values kept as strings and converted on submit. */
export function SchemaFields({
  schema,
  values,
  onChange,
}: {
  schema: JsonSchema;
  values: Values;
  onChange(values: Values): void;
}): JSX.Element {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return <p class="muted">No arguments.</p>;
  return (
    <>
      {properties.map(([name, offered]) => {
        const { property, nullable } = fieldOf(offered);
        const type = Array.isArray(property.type) ? property.type[0] : property.type;
        const required = schema.required?.includes(name) === true && !nullable;
        const set = (value: string): void => onChange({ ...values, [name]: value });
        if (property.enum !== undefined) {
          return (
            <label class="field" key={name}>
              <span>
                {name}
                {required ? ' *' : ''}
              </span>
              <select
                name={name}
                value={values[name] ?? ''}
                onChange={(e) => set((e.currentTarget as HTMLSelectElement).value)}
              >
                <option value="" />
                {property.enum.map((option) => (
                  <option key={String(option)} value={String(option)}>
                    {String(option)}
                  </option>
                ))}
              </select>
              {property.description === undefined ? null : <small>{property.description}</small>}
            </label>
          );
        }
        if (type === 'boolean') {
          return (
            <label class="field check" key={name}>
              <input
                type="checkbox"
                name={name}
                checked={values[name] === 'true'}
                onChange={(e) => set((e.currentTarget as HTMLInputElement).checked ? 'true' : '')}
              />
              <span>{name}</span>
              {property.description === undefined ? null : <small>{property.description}</small>}
            </label>
          );
        }
        const multiline = type === 'object' || type === 'array';
        return (
          <label class="field" key={name}>
            <span>
              {name}
              {required ? ' *' : ''}{' '}
              <em class="muted">
                {type === 'array' || type === 'object' ? `${type} (JSON)` : type}
              </em>
            </span>
            {multiline ? (
              <textarea
                name={name}
                rows={3}
                value={values[name] ?? ''}
                onInput={(e) => set((e.currentTarget as HTMLTextAreaElement).value)}
              />
            ) : type === 'number' || type === 'integer' ? (
              <input
                name={name}
                type="number"
                required={required}
                value={values[name] ?? ''}
                onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
              />
            ) : (
              <input
                name={name}
                type="text"
                required={required}
                value={values[name] ?? ''}
                onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
              />
            )}
            {property.description === undefined ? null : <small>{property.description}</small>}
          </label>
        );
      })}
    </>
  );
}

/**
 * The field a property is: an optional argument comes as `anyOf: [its schema, { type: 'null' }]`
 * (strict hosts want every property required), shown as its schema, not required.
 */
function fieldOf(property: JsonSchema): { property: JsonSchema; nullable: boolean } {
  const options = property.anyOf;
  if (options === undefined) return { property, nullable: false };
  const inner = options.find((option) => option.type !== 'null');
  const nullable = options.some((option) => option.type === 'null');
  if (inner === undefined) return { property, nullable };
  return {
    property: {
      ...inner,
      ...definedProps({ description: property.description }),
    },
    nullable,
  };
}

/** Converts the form's strings to the schema's types; throws naming the field that does not parse. */
export function argumentsOf(schema: JsonSchema, values: Values): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, offered] of Object.entries(schema.properties ?? {})) {
    const raw = values[name];
    if (raw === undefined || raw === '') continue;
    const { property } = fieldOf(offered);
    const type = Array.isArray(property.type) ? property.type[0] : property.type;
    if (type === 'number' || type === 'integer') {
      const number = Number(raw);
      if (!Number.isFinite(number)) throw new Error(`${name}: not a number`);
      args[name] = number;
    } else if (type === 'boolean') args[name] = raw === 'true';
    else if (type === 'object' || type === 'array') {
      try {
        args[name] = JSON.parse(raw);
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    } else args[name] = raw;
  }
  return args;
}
