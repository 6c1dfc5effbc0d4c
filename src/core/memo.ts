/**
 * Remembers the latest results of a pure function of a string — for the URI work every request
 * repeats (parsing, normalising, mapping to a path) when clients read the same resources again.
 * Bounded in entries and in key length; a call that throws is not remembered. Results are shared
 * between callers, so they must not be mutated (freeze objects).
 */
export function rememberRecent<V>(
  fn: (key: string) => V,
  options: { entries?: number; maxKeyLength?: number } = {},
): (key: string) => V {
  const entries = options.entries ?? 512;
  const maxKeyLength = options.maxKeyLength ?? 2048;
  const kept = new Map<string, V>();
  return (key: string): V => {
    if (kept.has(key)) return kept.get(key) as V;
    const value = fn(key);
    if (key.length <= maxKeyLength) {
      if (kept.size >= entries) kept.delete(kept.keys().next().value as string);
      kept.set(key, value);
    }
    return value;
  };
}
