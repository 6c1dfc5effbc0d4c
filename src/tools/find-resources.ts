/**
 * `find_resources`: the resources matching a name glob, a MIME type, a modification time and/or a
 * URI prefix. There is no index to ask, so it pages through the registry's list and filters — and
 * bounds the work of one call: it stops after examining `scanLimit` resources or spending
 * `scanTimeMs` (checked between pages of 500), whichever comes first, and returns what it found
 * with a cursor to continue. A search over a 100,000-file tree is then several quick calls (about
 * 0.2-0.5 s each on a warm cache), never one slow one. A client that asked for progress gets one
 * report per page scanned.
 *
 * Name globs (picomatch syntax): a pattern without `/` matches the resource's name (for files, the
 * file name: `*.md`); a pattern with `/` matches the path relative to the served root the resource
 * belongs to, taken from its URI and percent-decoded (`docs/**\/*.md`, `**\/api/*.ts`). Dotfiles
 * match like any other file. Matching is smart-case: case-insensitive unless the pattern has an
 * upper-case letter. The continuation cursor (find-cursor.ts) carries no filters: pass the same
 * filters with it.
 */
import picomatch from 'picomatch';
import { z } from 'zod';
import type { Principal } from '../core/principal.js';
import type { Registry } from '../core/registry.js';
import { defineOneRoundTool, type Tool, type ToolResult } from '../core/tools.js';
import type { Provider, ResourceInfo } from '../core/types.js';
import { parseUri } from '../core/uri.js';
import { ConfigError, isReservoirError } from '../core/errors.js';
import { decodePosition, encodePosition, SCAN_PAGE, type Position } from './find-cursor.js';
import { linkOf } from './search-resources.js';
import {
  fromReservoirError,
  quote,
  READ_ONLY,
  renderSummaries,
  resourceSummary,
  servedRoots,
  skippedSources,
  summarise,
  toolError,
  toolResult,
  withSkipped,
  type ResourceSummary,
} from './shared.js';
import type { SkippedSource } from '../core/source-health.js';
import { definedProps } from '../core/defined.js';

export const FIND_RESOURCES = 'find_resources';
export const DEFAULT_FIND_LIMIT = 50;
export const MAX_FIND_LIMIT = 500;
/** Resources one call examines at most before returning a cursor. */
export const DEFAULT_SCAN_LIMIT = 20_000;
/** Time one call scans for at most before returning a cursor (checked between pages). */
export const DEFAULT_SCAN_TIME_MS = 1_000;

export interface FindOptions {
  /** Resources one call examines at most. @default 20000 */
  scanLimit?: number;
  /** Milliseconds one call scans for at most (checked between pages). @default 1000 */
  scanTimeMs?: number;
}

// A MIME type (`text/markdown`) or a type wildcard (`image/*`), parameters not allowed.
const MIME_FILTER = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/(?:\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)$/;
// A calendar date, or a date and time with a UTC offset (`Z` or ±HH:MM): never a local time.
const ISO_8601 =
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;

const input = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe(
      'A glob. Without a slash it matches the resource name (for files, the file name), e.g. "*.md", "README*", "*.{ts,tsx}". ' +
        'With a slash it matches the path under the served root, e.g. "docs/**/*.md", "**/api/*.ts". ' +
        'Case-insensitive unless the pattern has an upper-case letter.',
    ),
  mimeType: z
    .string()
    .regex(
      MIME_FILTER,
      'expected a MIME type such as "text/markdown" or a wildcard such as "image/*"',
    )
    .optional()
    .describe('A MIME type ("text/markdown") or a type wildcard ("image/*").'),
  modifiedSince: z
    .string()
    .regex(
      ISO_8601,
      'expected an ISO 8601 date ("2025-01-31") or date-time with an offset ("2025-01-31T12:00:00Z")',
    )
    .refine((value) => !Number.isNaN(Date.parse(value)), 'not a real date')
    .optional()
    .describe(
      'Only resources modified at or after this time: an ISO 8601 date ("2025-01-31", midnight UTC) or date-time with an offset ("2025-01-31T12:00:00Z").',
    ),
  under: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Only resources whose URI is under this URI prefix, e.g. a directory: "file:///srv/docs/guides/".',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_FIND_LIMIT)
    .optional()
    .describe(
      `How many matches to return at most (1-${MAX_FIND_LIMIT}, default ${DEFAULT_FIND_LIMIT}).`,
    ),
  cursor: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The nextCursor of a previous find_resources call, to continue that search. Pass the same filters with it.',
    ),
});

const output = z.object({
  resources: z.array(resourceSummary).describe('The matches found by this call, in list order.'),
  nextCursor: z
    .string()
    .optional()
    .describe(
      'Present when the search is not finished (the limit was reached, or this call stopped scanning): pass it as `cursor`, with the same filters, to continue.',
    ),
  examined: z.number().int().nonnegative().describe('How many resources this call examined.'),
  skippedSources,
});

type Input = z.output<typeof input>;

export function findResourcesTool(registry: Registry, options: FindOptions = {}): Tool {
  const scanLimit = options.scanLimit ?? DEFAULT_SCAN_LIMIT;
  const scanTimeMs = options.scanTimeMs ?? DEFAULT_SCAN_TIME_MS;
  if (!Number.isSafeInteger(scanLimit) || scanLimit < 1)
    throw new ConfigError('scanLimit', 'must be a whole number of at least 1', {
      value: scanLimit,
    });
  if (!Number.isSafeInteger(scanTimeMs) || scanTimeMs < 0)
    throw new ConfigError('scanTimeMs', 'must be a whole number of milliseconds', {
      value: scanTimeMs,
    });
  return defineOneRoundTool({
    name: FIND_RESOURCES,
    title: 'Find resources',
    description:
      'Find resources by file name pattern, MIME type, modification time and/or location; all the filters given must match. ' +
      'Examples: {"name": "*.md"}; {"name": "**/api/*.ts"}; {"mimeType": "image/*"}; {"modifiedSince": "2025-01-31"}; ' +
      '{"under": "file:///srv/docs/guides/", "name": "*.md"}. Returns the matching resources (URI, name, MIME type, size, last-modified time). ' +
      'Each call examines a bounded number of resources: when the result has a nextCursor, the search is not finished — ' +
      'even if this call found nothing — and calling find_resources again with the same filters and that cursor continues it.',
    input,
    output,
    annotations: { title: 'Find resources', ...READ_ONLY },
    async call(args, ctx): Promise<ToolResult> {
      let filter: Filter;
      let position: Position;
      try {
        filter = compileFilter(registry, args, ctx.principal);
        position = args.cursor === undefined ? { skip: 0 } : decodePosition(args.cursor);
      } catch (error) {
        if (error instanceof FilterError) return toolError(error.message);
        return fromReservoirError(error, FIND_RESOURCES);
      }
      if (filter.mounts.size === 0) {
        const text = `No served source has resources under ${args.under ?? ''}${servedRoots(registry, ctx.principal)}, so nothing can match.`;
        return toolResult(text, { resources: [], examined: 0 });
      }
      const limit = args.limit ?? DEFAULT_FIND_LIMIT;
      const started = Date.now();
      const matches: ResourceSummary[] = [];
      let examined = 0;
      let pages = 0;
      let next: Position | undefined;
      const skipped = new Map<string, SkippedSource>();
      try {
        scan: for (;;) {
          ctx.signal.throwIfAborted();
          // Keyset pages start where their cursor points whatever their size, so a shorter page (the
          // last of a scan budget) and a resumed full one agree on what `skip` counts.
          const size = position.skip > 0 ? SCAN_PAGE : Math.min(SCAN_PAGE, scanLimit - examined);
          // One report per page asked for (a client that asked for progress sees the scan advance).
          pages += 1;
          await ctx
            .progress(
              pages,
              undefined,
              `scanning: examined ${examined} resources, ${matches.length} matches so far`,
            )
            .catch(() => undefined);
          const page = await registry.listResources(position.page, ctx, { limit: size });
          const items = page.items;
          for (const source of page.skipped ?? []) {
            const owner = registry.route(source.source);
            if (owner !== undefined && filter.mounts.has(owner)) skipped.set(source.source, source);
          }
          let index = align(items, position);
          let pastRelevant = false;
          for (; index < items.length; index += 1) {
            if (examined >= scanLimit) {
              const last = items[index - 1];
              next = { ...pageOf(position), skip: index, lastUri: last?.uri };
              break scan;
            }
            const item = items[index]!;
            examined += 1;
            const provider = registry.route(item.uri);
            if (provider !== undefined && filter.mounts.has(provider)) {
              if (filter.matches(item, provider)) {
                matches.push(summarise(item));
                if (matches.length >= limit) {
                  if (index + 1 < items.length)
                    next = { ...pageOf(position), skip: index + 1, lastUri: item.uri };
                  else if (page.nextCursor !== undefined) next = { page: page.nextCursor, skip: 0 };
                  break scan;
                }
              }
            } else if (
              provider !== undefined &&
              registry.providers().indexOf(provider) > filter.lastMount
            ) {
              pastRelevant = true; // lists merge in mount order: no later item can be in a relevant mount
              break;
            }
          }
          if (pastRelevant || page.nextCursor === undefined) break;
          position = { page: page.nextCursor, skip: 0 };
          if (examined >= scanLimit || Date.now() - started >= scanTimeMs) {
            next = position;
            break;
          }
        }
      } catch (error) {
        return fromReservoirError(error, FIND_RESOURCES);
      }
      const nextCursor = next === undefined ? undefined : encodePosition(next);
      const result = toolResult(
        render(matches, examined, nextCursor, limit, describeFilter(args)),
        {
          resources: matches,
          ...definedProps({ nextCursor }),
          examined,
        },
      );
      // One resource_link per match, so hosts can attach them.
      result.content.push(...matches.map(linkOf));
      return withSkipped(result, [...skipped.values()]);
    },
  });
}

function pageOf(position: Position): { page?: string } {
  return position.page === undefined ? {} : { page: position.page };
}

/**
 * Where to start in a re-listed page: after `lastUri` when it is still where the cursor left it
 * or has moved within the page (resources added or removed before it); otherwise at `skip`.
 */
function align(items: readonly ResourceInfo[], position: Position): number {
  if (position.skip === 0 || position.lastUri === undefined)
    return Math.min(position.skip, items.length);
  if (items[position.skip - 1]?.uri === position.lastUri) return position.skip;
  const found = items.findIndex((item) => item.uri === position.lastUri);
  return found >= 0 ? found + 1 : Math.min(position.skip, items.length);
}

function render(
  matches: readonly ResourceSummary[],
  examined: number,
  nextCursor: string | undefined,
  limit: number,
  filters: string,
): string {
  const lines: string[] = [];
  const found = `${matches.length} matching resource${matches.length === 1 ? '' : 's'}`;
  lines.push(
    matches.length === 0
      ? `No matches in this call (${filters}; examined ${examined} resources).`
      : `${found} (${filters}):`,
  );
  if (matches.length > 0) lines.push(renderSummaries(matches));
  if (nextCursor === undefined) lines.push('The search is complete.');
  else if (matches.length >= limit) {
    lines.push(
      `More matches may follow: call find_resources again with the same filters and cursor ${quote(nextCursor)} to continue.`,
    );
  } else {
    lines.push(
      `This call stopped after examining ${examined} resources; the search is not finished. ` +
        `Call find_resources again with the same filters and cursor ${quote(nextCursor)} to continue.`,
    );
  }
  return lines.join('\n');
}

function describeFilter(args: Input): string {
  const parts: string[] = [];
  if (args.name !== undefined) parts.push(`name ${quote(args.name)}`);
  if (args.mimeType !== undefined) parts.push(`mimeType ${args.mimeType}`);
  if (args.modifiedSince !== undefined) parts.push(`modified since ${args.modifiedSince}`);
  if (args.under !== undefined) parts.push(`under ${args.under}`);
  return parts.length === 0 ? 'no filters' : parts.join(', ');
}

class FilterError extends Error {}

interface Filter {
  /** The mounts whose resources can match (all of them, unless `under` narrows it). */
  mounts: Set<Provider>;
  /** Index (in mount order) of the last relevant mount. */
  lastMount: number;
  matches(item: ResourceInfo, provider: Provider): boolean;
}

function compileFilter(registry: Registry, args: Input, principal: Principal | undefined): Filter {
  const tests: ((item: ResourceInfo, provider: Provider) => boolean)[] = [];

  let under: string | undefined;
  if (args.under !== undefined) {
    let href: string;
    try {
      href = parseUri(args.under).href;
    } catch (error) {
      if (!isReservoirError(error)) throw error;
      throw new FilterError(
        `Invalid 'under': ${error.message}. Pass an absolute URI prefix such as a directory URI from list_resources${servedRoots(registry, principal)}.`,
      );
    }
    under = href.endsWith('/') ? href : `${href}/`;
    const prefix = under;
    tests.push((item) => item.uri.startsWith(prefix));
  }
  const mounts = new Set<Provider>();
  let lastMount = -1;
  // A root the caller can reach nothing under is searched as if it were not served at all.
  const visible = new Set(registry.access.visibleRoots(principal));
  registry.providers().forEach((provider, index) => {
    if (!visible.has(provider.root)) return;
    if (under === undefined || under.startsWith(provider.root) || provider.root.startsWith(under)) {
      mounts.add(provider);
      lastMount = index;
    }
  });

  if (args.name !== undefined) {
    const pattern = args.name;
    let isMatch: (value: string) => boolean;
    try {
      isMatch = picomatch(pattern, {
        dot: true,
        nocase: !/\p{Lu}/u.test(pattern),
        strictBrackets: true,
      });
    } catch (error) {
      throw new FilterError(
        `Invalid 'name' glob ${quote(pattern)}: ${error instanceof Error ? error.message : String(error)}. Use a glob such as "*.md" or "docs/**/*.md".`,
      );
    }
    if (pattern.includes('/'))
      tests.push((item, provider) => isMatch(relativePath(item.uri, provider.root)));
    else tests.push((item) => isMatch(item.name));
  }

  if (args.mimeType !== undefined) {
    const wanted = args.mimeType.toLowerCase();
    const family = wanted.endsWith('/*') ? wanted.slice(0, -1) : undefined;
    tests.push((item) => {
      const type = item.mimeType?.split(';')[0]?.trim().toLowerCase();
      if (type === undefined) return false;
      return family === undefined ? type === wanted : type.startsWith(family);
    });
  }

  if (args.modifiedSince !== undefined) {
    const since = Date.parse(args.modifiedSince);
    tests.push((item) => {
      const modified = item.annotations?.lastModified;
      return modified !== undefined && Date.parse(modified) >= since;
    });
  }

  return {
    mounts,
    lastMount,
    matches: (item, provider) => tests.every((test) => test(item, provider)),
  };
}

/** The resource's path under its mount's root, percent-decoded where that is valid. */
function relativePath(uri: string, root: string): string {
  const rest = uri.startsWith(root) ? uri.slice(root.length) : uri;
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}
