/**
 * A record's own member `key`, or undefined. A name that comes from data, a client or a config (a
 * file's, a column's, an argument's, a variable's) read off a plain object would otherwise find
 * Object.prototype's members: `constructor`, `toString`, `__proto__` (docs/design.md, "Names are data").
 */
export function ownMember<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
