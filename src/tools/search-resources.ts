/**
 * `search_resources`: full-text search over every indexed source — ranked (BM25), in any language,
 * and only over what the caller may read. The index is opened on the first call; while its first
 * build runs, a call waits briefly (reporting progress to a client that asked for it) and then
 * answers from what is indexed so far, saying so in `indexing`.
 *
 * The search modules (and SQLite with them) are loaded by `open()`, never by importing this file.
 */
import { z } from 'zod';
import { InvalidArgumentError, isReservoirError } from '../core/errors.js';
import { defineOneRoundTool, type Tool, type ToolContext, type ToolResult } from '../core/tools.js';
import type { ContentBlock } from '../core/types.js';
import type { SearchHit, SearchPage } from '../search/lazy.js';
import type { SearchService } from '../search/service.js';
import { fromReservoirError, quote, READ_ONLY, toolError } from './shared.js';
import { definedProps } from '../core/defined.js';

export const SEARCH_RESOURCES = 'search_resources';
export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;
/** How long a call made while the first build runs waits for it before answering from what is indexed. */
export const DEFAULT_FIRST_BUILD_WAIT_MS = 1000;

export interface SearchToolOptions {
  /** Opens the index (loading the search modules on first use). */
  open(): Promise<SearchService>;
  /** @default 1000 */
  firstBuildWaitMs?: number;
}

const MIME_FILTER = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/(?:\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)$/;

const input = z.strictObject({
  query: z
    .string()
    .describe(
      'What to look for. Words are all required (AND) unless joined by OR; "a phrase" in quotes; retr* for a prefix; NOT word or -word to leave out; ' +
        'filters path:docs/, mime:text/markdown (or mime:text/*), source:NAME. Case and the accents of Latin letters do not matter; Chinese and Japanese are matched by word.',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_SEARCH_LIMIT)
    .optional()
    .describe(
      `How many hits to return at most (1-${MAX_SEARCH_LIMIT}, default ${DEFAULT_SEARCH_LIMIT}).`,
    ),
  cursor: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The nextCursor of a previous search_resources call with the same query and filters, for the next hits.',
    ),
  under: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Only resources whose URI starts with this prefix, e.g. a directory URI "file:///srv/docs/guides/".',
    ),
  mimeType: z
    .string()
    .regex(
      MIME_FILTER,
      'expected a MIME type such as "text/markdown" or a wildcard such as "text/*"',
    )
    .optional()
    .describe('Only resources of this MIME type ("text/markdown") or family ("text/*").'),
  source: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Only resources of this source (its name: a files root's directory name, a git repository's name).",
    ),
});

const hit = z.object({
  uri: z.string().describe('The resource URI; pass it to read_resource.'),
  name: z.string(),
  title: z.string().optional(),
  mimeType: z.string().optional(),
  score: z.number().describe('Relevance (BM25); higher is better.'),
  snippet: z
    .string()
    .describe(
      'Plain text around the first match, without markup; empty when the resource cannot be read now.',
    ),
  highlights: z
    .array(z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]))
    .describe(
      'Where the matches lie in snippet: [start, end) offsets in UTF-16 code units (JavaScript string indices), in order; empty for a name or path match.',
    ),
  lastModified: z.string().optional(),
  part: z
    .string()
    .optional()
    .describe(
      'For a document: the page, sheet or slide the snippet is from ("page 3", "sheet Budget"); read it with ?pages=3 or ?sheet=Budget.',
    ),
});

const output = z.object({
  hits: z.array(hit).describe('Best first.'),
  nextCursor: z
    .string()
    .optional()
    .describe(
      'Present when more hits follow: pass it as `cursor` with the same query and filters.',
    ),
  indexing: z
    .object({ done: z.number().int().nonnegative(), total: z.number().int().nonnegative() })
    .optional()
    .describe(
      'Present while the index is still being built: the hits cover what was indexed so far (a caller restricted by access rules is told only of what it may see).',
    ),
  incomplete: z
    .object({ reason: z.string() })
    .optional()
    .describe(
      'Present when the index could not be written (disk full, I/O error): it lacks some resources, so hits may be missing.',
    ),
});

export function searchResourcesTool(options: SearchToolOptions): Tool {
  const waitMs = options.firstBuildWaitMs ?? DEFAULT_FIRST_BUILD_WAIT_MS;
  return defineOneRoundTool({
    name: SEARCH_RESOURCES,
    title: 'Search resources',
    description:
      'Search the text, names and paths of every indexed resource (files, git repositories) and get the best matches first, each with a snippet. ' +
      'Examples: {"query": "retry budget"}; {"query": "\\"connection pool\\" path:docs/"}; {"query": "auth* NOT test", "mimeType": "text/markdown"}. ' +
      'Use it to find where something is said or configured; use find_resources to filter by file name pattern or date.',
    input,
    output,
    annotations: { title: 'Search resources', ...READ_ONLY },
    async call(args, ctx): Promise<ToolResult> {
      let page: SearchPage;
      try {
        const service = await options.open();
        if (service.firstBuildRunning()) await waitForBuild(service, ctx, waitMs);
        page = await service.search(
          {
            query: args.query,
            limit: args.limit ?? DEFAULT_SEARCH_LIMIT,
            cursor: args.cursor,
            under: args.under,
            mimeType: args.mimeType,
            source: args.source,
          },
          ctx,
        );
      } catch (error) {
        if (error instanceof InvalidArgumentError)
          return toolError(
            `Invalid ${error.data?.['argument'] === undefined ? 'argument' : `'${String(error.data['argument'])}'`}: ${bare(error.message)}.`,
          );
        if (isReservoirError(error)) return fromReservoirError(error, SEARCH_RESOURCES);
        throw error;
      }
      const links: ContentBlock[] = page.hits.map(linkOf);
      return {
        content: [{ type: 'text', text: render(args.query, page) }, ...links],
        structuredContent: { ...page },
      };
    },
  });
}

/** A resource_link block for a hit or a listed resource, so hosts can attach it. */
export function linkOf(resource: {
  uri: string;
  name: string;
  title?: string | undefined;
  mimeType?: string | undefined;
  size?: number | undefined;
}): ContentBlock {
  return {
    type: 'resource_link',
    uri: resource.uri,
    name: resource.name,
    ...definedProps({ title: resource.title, mimeType: resource.mimeType, size: resource.size }),
  };
}

/** Waits for the first build (up to `waitMs`), reporting its progress to a client that asked. */
async function waitForBuild(
  service: SearchService,
  ctx: ToolContext,
  waitMs: number,
): Promise<void> {
  // The first report goes out even at 0 done: a client learns at once that the build is under way.
  // A caller some access rule restricts learns only that: the build's counts include what it may
  // not see (its answer's `indexing` counts what it may).
  if (!service.seesEverything(ctx.principal)) {
    void ctx.progress(0, undefined, 'indexing').catch(() => undefined);
    await waitAtMost(service.ready, waitMs);
    return;
  }
  let lastSent = -1;
  const report = (): void => {
    const { done, total } = service.progress();
    if (done === lastSent) return;
    lastSent = done;
    void ctx
      .progress(done, Math.max(total, done), `indexing: ${done} of ${total} resources`)
      .catch(() => undefined);
  };
  report();
  const off = service.onProgress(report);
  try {
    await waitAtMost(service.ready, waitMs);
  } finally {
    off();
  }
}

async function waitAtMost(ready: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function bare(message: string): string {
  return message.replace(/^Invalid argument '[^']*': /, '').replace(/\.$/, '');
}

/** The matched words after the snippet, quoted as JSON strings: markers inside the text could be the file's own. */
function matched(hit: SearchHit): string {
  if (hit.highlights.length === 0) return '';
  return `\n   match: ${hit.highlights.map(([start, end]) => JSON.stringify(hit.snippet.slice(start, end))).join(', ')}`;
}

function render(query: string, page: SearchPage): string {
  const lines: string[] = [];
  if (page.hits.length === 0) lines.push(`No resources match ${quote(query)}.`);
  else {
    lines.push(
      `${page.hits.length} resource${page.hits.length === 1 ? '' : 's'} match ${quote(query)}, best first:`,
    );
    page.hits.forEach((h: SearchHit, i) =>
      lines.push(
        `${i + 1}. ${h.uri}${h.part === undefined ? '' : ` (${h.part})`}${h.snippet === '' ? '' : `\n   ${h.snippet}${matched(h)}`}`,
      ),
    );
  }
  if (page.nextCursor !== undefined)
    lines.push(
      `More hits follow: call search_resources with the same query and cursor ${quote(page.nextCursor)}.`,
    );
  if (page.incomplete !== undefined)
    lines.push(
      `The index is incomplete: ${page.incomplete.reason}. Some matching resources may be missing from these hits.`,
    );
  if (page.indexing !== undefined) {
    lines.push(
      `The index is still being built (${page.indexing.done} of ${page.indexing.total} resources so far): these hits cover what is indexed; call again later for complete results.`,
    );
  }
  return lines.join('\n');
}
