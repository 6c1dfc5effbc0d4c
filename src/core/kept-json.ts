/**
 * JSON already made for a value, kept beside it so a transport that writes the value again (inside a
 * message) uses it instead of serialising the value a second time. `sql_query` serialises its rows
 * once for its text block and keeps that JSON for its structuredContent's `rows`
 * (providers/sql/tool.ts); the stdio wire's encoder writes it in their place (mcp/direct/encode.ts).
 * A transport that does not know of it (the SDK's HTTP transports) serialises the value as usual:
 * the same bytes, since the kept JSON is `JSON.stringify(value)` as made.
 *
 * The caller hands the value over with its JSON: nothing changes it afterwards (as with a blob's
 * bytes, core/base64-blob.ts). The entry goes when the value does.
 */
const kept = new WeakMap<object, string>();

/** Keeps `json` — `JSON.stringify(value)`, made by the caller — as `value`'s JSON; returns `value`. */
export function keepJson<T extends object>(value: T, json: string): T {
  kept.set(value, json);
  return value;
}

/** The JSON kept for `value` by {@link keepJson}; undefined when none was. */
export function keptJson(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? kept.get(value) : undefined;
}
