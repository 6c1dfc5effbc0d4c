/**
 * Tool input schemas as the strictest hosts take them. OpenAI's strict mode wants every object
 * closed (`additionalProperties: false`) with every property required, and refuses keywords it does
 * not know; Gemini refuses type arrays (`["string", "null"]`) and `$schema`. So an optional
 * argument is offered as required but nullable (`anyOf: [its schema, { type: "null" }]`), and a
 * null argument means "not given" (`withoutNulls`, applied before validation). Keywords outside
 * the portable set (`$schema`, `minLength`, `maxLength`, `default`, …) are dropped from what is
 * offered; the tool's own validation still enforces them, with an error naming the argument.
 */
import { definedProps } from './defined.js';

/** The keywords every strict host accepts. */
export const PORTABLE_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'description',
  'title',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
]);

type Schema = Record<string, unknown>;

/** The schema with portable keywords only, every object closed and all its properties required. */
export function portableSchema(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!PORTABLE_KEYWORDS.has(key)) continue;
    if (key === 'properties' || key === 'required' || key === 'additionalProperties') continue;
    if (key === 'items' && isSchema(value)) out[key] = portableSchema(value);
    else if (key === 'anyOf' && Array.isArray(value))
      out[key] = value.map((s) => (isSchema(s) ? portableSchema(s) : s));
    else if (key === 'type' && Array.isArray(value))
      // A type array becomes the same choice spelled with anyOf.
      out['anyOf'] = value.map((type: unknown) => ({ type }));
    else out[key] = value;
  }
  if (schema['type'] === 'object' || isSchema(schema['properties'])) {
    const properties = isSchema(schema['properties']) ? schema['properties'] : {};
    const required = new Set(Array.isArray(schema['required']) ? schema['required'] : []);
    // Each property an own member, whatever its name: assigned into a plain object, `__proto__`
    // would set the prototype and vanish from the schema (docs/design.md, "Names are data").
    const portable: Schema = Object.fromEntries(
      Object.entries(properties)
        .filter((entry): entry is [string, Schema] => isSchema(entry[1]))
        .map(([name, property]) => {
          const inner = portableSchema(property);
          return [name, required.has(name) ? inner : nullable(inner)];
        }),
    );
    out['type'] = 'object';
    out['properties'] = portable;
    out['required'] = Object.keys(portable);
    out['additionalProperties'] = false;
  }
  return out;
}

/** Keywords whose value is one subschema, or (`LIST_KEYWORDS`) a list of them. */
const SCHEMA_KEYWORDS = ['items', 'not', 'contains', 'additionalItems'];
const LIST_KEYWORDS = ['prefixItems', 'anyOf', 'allOf', 'oneOf'];

/**
 * An output schema with every boolean subschema spelled as an object (`false` as `{ not: {} }`,
 * `true` as `{}`), which hosts that read schemas strictly expect (a tuple's closing `items: false`);
 * `additionalProperties: false` keeps its usual form. Nothing else changes: what a tool answers is
 * checked against this schema by clients, so it says exactly what the tool's output schema says.
 */
export function portableOutputSchema(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_KEYWORDS.includes(key)) out[key] = subschema(value);
    else if (LIST_KEYWORDS.includes(key) && Array.isArray(value)) out[key] = value.map(subschema);
    else if ((key === 'properties' || key === '$defs') && isSchema(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, subschema(v)]));
    else if (key === 'additionalProperties' && isSchema(value))
      out[key] = portableOutputSchema(value);
    else out[key] = value;
  }
  return out;
}

function subschema(value: unknown): unknown {
  if (value === false) return { not: {} };
  if (value === true) return {};
  return isSchema(value) ? portableOutputSchema(value) : value;
}

/**
 * Arguments without their null members (a null argument is one not given), in an object with no
 * prototype: zod reads each property of the schema from the arguments, so an optional argument
 * `valueOf` or `toString` not given would be Object.prototype's function, refused as one.
 */
export function withoutNulls(args: unknown): unknown {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return args;
  const given = Object.create(null) as Schema;
  for (const [key, value] of Object.entries(args as Schema)) if (value !== null) given[key] = value;
  return given;
}

/** `schema` or null, its description kept outside the choice (where hosts show it). */
function nullable(schema: Schema): Schema {
  const { description, title, ...rest } = schema;
  return { ...definedProps({ title, description }), anyOf: [rest, { type: 'null' }] };
}

function isSchema(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
