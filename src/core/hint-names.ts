/**
 * Hints from a resource's name alone, the defaults under the config's `hints` rules:
 * - high (0.8, for the user and the assistant): READMEs, a folder's index page (`index.md`,
 *   `index.html` …, not a code module's `index.ts`), Agent Skills' `SKILL.md`, `AGENTS.md` and
 *   `llms.txt` — the files written to introduce what is around them;
 * - low (0.1, for the assistant): anything under a directory of installed or vendored
 *   dependencies or build output (`node_modules/`, `vendor/`, `dist/` …), lock files,
 *   minified bundles, source maps, protobuf output and snapshots — written by tools, read rarely.
 * Low wins: a README inside `node_modules/` is a dependency's.
 */
/** Who a resource is meant for (MCP's `annotations.audience`). */
export type Audience = 'user' | 'assistant';

export const HIGH_PRIORITY = 0.8;
export const LOW_PRIORITY = 0.1;

export interface NameHint {
  priority: number;
  audience: Audience[];
}

const HIGH: NameHint = { priority: HIGH_PRIORITY, audience: ['user', 'assistant'] };
const LOW: NameHint = { priority: LOW_PRIORITY, audience: ['assistant'] };

/** Directory names whose contents are installed, vendored or built (compared case-sensitively). */
const LOW_DIRECTORIES = new Set([
  'node_modules',
  'bower_components',
  'jspm_packages',
  'vendor',
  'third_party',
  'third-party',
  'site-packages',
  '__pycache__',
  '.yarn',
  '.pnpm-store',
  'dist',
  '.next',
  '.nuxt',
  '.svelte-kit',
  '__snapshots__',
]);

/** Whole file names (lower case) of lock files without a `.lock` extension. */
const LOCK_NAMES = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'bun.lockb',
  'go.sum',
  'packages.lock.json',
  'gradle.lockfile',
]);

const LOW_NAME =
  /(?:\.lock|\.min\.(?:js|mjs|cjs|css)|\.(?:js|mjs|cjs|css)\.map|\.pb\.(?:go|cc|h)|_pb2(?:_grpc)?\.pyi?|\.generated\.[a-z0-9]+|\.snap)$/i;
const HIGH_NAME =
  /^(?:readme(?:\.[a-z0-9]+)?|index\.(?:md|mdx|markdown|rst|txt|adoc|html?)|skill\.md|agents\.md|llms\.txt)$/i;

/** The hint a resource's URI implies by its name, if any. */
export function nameHint(uri: string): NameHint | undefined {
  const segments = pathSegments(uri);
  if (segments.length === 0) return undefined;
  const name = segments[segments.length - 1]!;
  for (let i = 0; i < segments.length - 1; i += 1)
    if (LOW_DIRECTORIES.has(segments[i]!)) return LOW;
  if (LOW_NAME.test(name) || LOCK_NAMES.has(name.toLowerCase())) return LOW;
  if (HIGH_NAME.test(name)) return HIGH;
  return undefined;
}

/** The decoded path segments of a URI (after its authority; a query or fragment ignored). */
function pathSegments(uri: string): string[] {
  const scheme = uri.indexOf(':');
  let rest = uri.slice(scheme + 1);
  const cut = rest.search(/[?#]/);
  if (cut >= 0) rest = rest.slice(0, cut);
  if (rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    rest = slash < 0 ? '' : rest.slice(slash);
  }
  const segments = rest.split('/').filter((segment) => segment !== '');
  // most names have no escape: decoding each segment of each resource of a listing costs its share
  if (!rest.includes('%')) return segments;
  return segments.map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  });
}
