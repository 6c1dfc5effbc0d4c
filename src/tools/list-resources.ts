/**
 * `list_resources`: one page of everything the server serves, for hosts that call tools and never
 * `resources/list`. Pages are the registry's own, behind the same sealed cursors: walking every page
 * sees each resource exactly once, whatever is added or removed meanwhile. A client that asked for
 * progress is told the page is being listed, at once and every second until it is (slow sources).
 */
import { z } from 'zod';
import type { Registry } from '../core/registry.js';
import { withProgress } from '../core/tool-progress.js';
import { defineOneRoundTool, type Tool } from '../core/tools.js';
import { linkOf } from './search-resources.js';
import {
  fromReservoirError,
  quote,
  READ_ONLY,
  renderSummaries,
  resourceSummary,
  skippedSources,
  summarise,
  toolResult,
  withSkipped,
} from './shared.js';

export const LIST_RESOURCES = 'list_resources';
/** Resources per page when the model does not say: enough to orient, small enough for a context window. */
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

const input = z.strictObject({
  cursor: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The nextCursor of a previous list_resources call, to get the page after it. Omit to start at the beginning.',
    ),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LIST_LIMIT)
    .optional()
    .describe(
      `How many resources to return at most (1-${MAX_LIST_LIMIT}, default ${DEFAULT_LIST_LIMIT}).`,
    ),
});

const output = z.object({
  resources: z.array(resourceSummary),
  nextCursor: z
    .string()
    .optional()
    .describe('Present when more resources follow: pass it as `cursor` to get them.'),
  skippedSources,
});

export function listResourcesTool(registry: Registry): Tool {
  return defineOneRoundTool({
    name: LIST_RESOURCES,
    title: 'List resources',
    description:
      'List the resources (files and other documents) this server serves, one page at a time, in a stable order. ' +
      'Each entry has the URI to pass to read_resource, plus its name, MIME type, size in bytes and last-modified time. ' +
      'When the result has a nextCursor, call list_resources again with that cursor to get the next page. ' +
      'To look for something specific (a file name pattern, a type, recent changes, a directory) use find_resources instead.',
    input,
    output,
    annotations: { title: 'List resources', ...READ_ONLY },
    async call({ cursor, limit }, ctx) {
      let page;
      try {
        page = await withProgress(ctx, 'listing resources', () =>
          registry.listResources(cursor, ctx, { limit: limit ?? DEFAULT_LIST_LIMIT }),
        );
      } catch (error) {
        return fromReservoirError(error, LIST_RESOURCES);
      }
      const resources = page.items.map(summarise);
      const lines: string[] = [];
      if (resources.length === 0) {
        lines.push(
          cursor === undefined && page.nextCursor === undefined
            ? 'This server serves no resources.'
            : 'No resources on this page.',
        );
      } else {
        lines.push(
          `${resources.length} resource${resources.length === 1 ? '' : 's'}:`,
          renderSummaries(resources),
        );
      }
      lines.push(
        page.nextCursor === undefined
          ? 'This is the end of the list.'
          : `More resources follow: call list_resources with cursor ${quote(page.nextCursor)} to get the next page.`,
      );
      const result = toolResult(
        lines.join('\n'),
        page.nextCursor === undefined ? { resources } : { resources, nextCursor: page.nextCursor },
      );
      // One resource_link per resource, so hosts can attach them.
      result.content.push(...resources.map(linkOf));
      return withSkipped(result, page.skipped ?? []);
    },
  });
}
