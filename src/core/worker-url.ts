/**
 * Where a worker thread's compiled entry is, for a module one folder below `src/` or `dist/` (or the
 * CLI's bundle in `dist/cli/`, the same depth): `dist/<entry>` beside it when it runs compiled, and
 * the build's copy when it runs from its TypeScript source (tests), since a worker cannot start
 * from a `.ts` file.
 */
export function compiledWorkerUrl(moduleUrl: string, entry: string): URL {
  return new URL(moduleUrl.endsWith('.ts') ? `../../dist/${entry}` : `../${entry}`, moduleUrl);
}
