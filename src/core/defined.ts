/**
 * Optional fields without the conditional spreads: with `exactOptionalPropertyTypes` on, an
 * optional field may be absent but never `undefined`, so an object built from values that may be
 * undefined has to leave those keys out. `definedProps` does that in one place, and its type says
 * so: a key whose value may be undefined comes out optional (and never undefined), the others as
 * they went in. Beside it, `ownMember`: a record's member only when it is the record's own.
 */

/** `T` with every key whose value may be undefined made optional and never undefined. */
export type DefinedProps<T> = {
  [K in keyof T as undefined extends T[K] ? never : K]: T[K];
} & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
} extends infer O
  ? { [K in keyof O]: O[K] }
  : never;

/**
 * `fields` without its undefined-valued keys (null, false, 0 and '' are kept).
 *
 * @example
 *   // { name: 'a' } when title is undefined, { name: 'a', title: 'A' } when it is 'A'
 *   const info = { name: 'a', ...definedProps({ title: prompt.title }) };
 */
export function definedProps<T extends object>(fields: T): DefinedProps<T> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out as DefinedProps<T>;
}

/**
 * A record's own member `key`, or undefined. A name that comes from data, a client or a config (a
 * file's, a column's, an argument's, a variable's) read off a plain object would otherwise find
 * Object.prototype's members: `constructor`, `toString`, `__proto__` (docs/design.md, "Names are data").
 */
export function ownMember<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
