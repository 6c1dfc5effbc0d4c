/**
 * Named-query parameters: each value read from the URI is checked against its declared type (and
 * allowed values) and converted to the JS value the driver binds as `$n` / `?n`. Nothing a client
 * sends is ever put into SQL text.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { NamedQuery, ParameterType, QueryParameter } from './options.js';

const INTEGER = /^-?\d{1,15}$/;
const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?$/;
/** ISO 8601 date, or date-time with optional fraction and offset. */
const DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;
const MAX_VALUE_LENGTH = 4096;

/** The bound values of `query` for the URI's query map, in declaration (placeholder) order. */
export function bindParameters(
  queryName: string,
  query: NamedQuery,
  given: Map<string, string>,
): { values: unknown[]; shown: Record<string, unknown> } {
  const declared = query.params ?? [];
  for (const key of given.keys()) {
    if (!declared.some((p) => p.name === key)) {
      const known = declared.map((p) => p.name);
      throw new InvalidArgumentError(
        key,
        `query '${queryName}' has no parameter '${key}'${known.length === 0 ? ' (it takes none)' : ` (it takes ${known.join(', ')})`}`,
      );
    }
  }
  const values: unknown[] = [];
  // No prototype: a parameter's name is the config's, and `__proto__` would set the prototype.
  const shown = Object.create(null) as Record<string, unknown>;
  for (const param of declared) {
    const raw = given.get(param.name);
    let value: unknown;
    if (raw === undefined) {
      if (param.default !== undefined) value = convert(param, String(param.default));
      else if (isRequired(param))
        throw new InvalidArgumentError(
          param.name,
          `required by query '${queryName}' (${describeType(param)})`,
        );
      else value = null;
    } else {
      value = convert(param, raw);
    }
    values.push(value);
    shown[param.name] = value;
  }
  return { values, shown };
}

export function isRequired(param: QueryParameter): boolean {
  return param.required ?? param.default === undefined;
}

export function describeType(param: QueryParameter): string {
  const type = param.type ?? 'string';
  const base: Record<ParameterType, string> = {
    string: 'a string',
    number: 'a number',
    integer: 'a whole number',
    boolean: 'true or false',
    date: 'an ISO 8601 date or date-time, e.g. 2024-05-01 or 2024-05-01T12:00:00Z',
  };
  return param.values === undefined
    ? base[type]
    : `one of ${param.values.map((v) => JSON.stringify(v)).join(', ')}`;
}

function convert(param: QueryParameter, raw: string): unknown {
  const fail = (): never => {
    throw new InvalidArgumentError(param.name, `expected ${describeType(param)}`, {
      value: raw.length > 64 ? `${raw.slice(0, 64)}…` : raw,
    });
  };
  if (raw.length > MAX_VALUE_LENGTH || raw.includes('\0')) fail();
  let value: unknown;
  switch (param.type ?? 'string') {
    case 'string':
      value = raw;
      break;
    case 'integer':
      if (!INTEGER.test(raw)) fail();
      value = Number(raw);
      break;
    case 'number':
      if (!NUMBER.test(raw) || !Number.isFinite(Number(raw))) fail();
      value = Number(raw);
      break;
    case 'boolean':
      if (raw === 'true' || raw === '1') value = true;
      else if (raw === 'false' || raw === '0') value = false;
      else fail();
      break;
    case 'date':
      if (
        !DATE.test(raw) ||
        Number.isNaN(Date.parse(raw.length === 10 ? `${raw}T00:00:00Z` : raw.replace(' ', 'T')))
      )
        fail();
      value = raw;
      break;
  }
  if (param.values !== undefined && !param.values.some((v) => String(v) === String(value))) fail();
  return value;
}
