/**
 * What the built-in tools share: the resource summary they return (schema and rendering), and the
 * turning of a failure into an `isError` result whose text tells the model what to do next.
 */
import { z } from 'zod';
import { isReservoirError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { Registry } from '../core/registry.js';
import { SKIPPED_SOURCES_META_KEY, type SkippedSource } from '../core/source-health.js';
import type { ToolAnnotations, ToolResult } from '../core/tools.js';
import type { ResourceInfo } from '../core/types.js';

/** Every built-in tool only reads what the registry serves: nothing outside it, nothing changed. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** One resource as the listing tools return it (`annotations.lastModified` flattened). */
export const resourceSummary = z.object({
  uri: z.string().describe('The resource URI; pass it to read_resource.'),
  name: z.string(),
  title: z
    .string()
    .optional()
    .describe('A human-readable name; for files, the path relative to the served root.'),
  description: z.string().optional(),
  mimeType: z.string().optional(),
  size: z.number().int().nonnegative().optional().describe('Size in bytes.'),
  lastModified: z.string().optional().describe('ISO 8601 time of the last modification.'),
});

export type ResourceSummary = z.output<typeof resourceSummary>;

export function summarise(info: ResourceInfo): ResourceSummary {
  const summary: ResourceSummary = { uri: info.uri, name: info.name };
  if (info.title !== undefined) summary.title = info.title;
  if (info.description !== undefined) summary.description = info.description;
  if (info.mimeType !== undefined) summary.mimeType = info.mimeType;
  if (typeof info.size === 'number' && Number.isSafeInteger(info.size) && info.size >= 0)
    summary.size = info.size;
  if (info.annotations?.lastModified !== undefined)
    summary.lastModified = info.annotations.lastModified;
  return summary;
}

/** One line per resource: `URI (type, size, modified …)`. */
export function renderSummaries(resources: readonly ResourceSummary[]): string {
  return resources
    .map((r) => {
      const facts = [
        r.mimeType,
        r.size === undefined ? undefined : `${r.size} bytes`,
        r.lastModified === undefined ? undefined : `modified ${r.lastModified}`,
      ]
        .filter((fact) => fact !== undefined)
        .join(', ');
      return facts === '' ? `- ${r.uri}` : `- ${r.uri} (${facts})`;
    })
    .join('\n');
}

/** A failure the model can act on. */
export function toolError(message: string): ToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** A successful result: a text rendering for clients that ignore `structuredContent`, and the structure. */
export function toolResult(text: string, structured: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * The `isError` result for a Reservoir error a tool does not handle specially; anything else
 * (a bug, an abort) is rethrown for the tools/call handler to log and report.
 */
export function fromReservoirError(error: unknown, tool: string): ToolResult {
  if (!isReservoirError(error)) throw error;
  switch (error.code) {
    case 'invalid_cursor':
      return toolError(
        `${error.message.replace(/ Start again without a cursor\.$/, '')}. Call ${tool} again without a cursor to start from the beginning.`,
      );
    case 'timeout':
      return toolError(`${error.message}. Try again, or narrow the request.`);
    case 'unavailable':
      return toolError(
        `${error.message}. The source cannot answer right now; try again later or use another resource.`,
      );
    default:
      return toolError(error.message);
  }
}

/** A string is quoted for the text rendering so the model can copy it exactly. */
export function quote(value: string): string {
  return JSON.stringify(value);
}

/** ` (served roots: …)`, naming at most five, and only roots `principal` may reach something under. */
export function servedRoots(registry: Registry, principal: Principal | undefined): string {
  const roots = registry.access.visibleRoots(principal);
  if (roots.length === 0) return '';
  const shown = roots.slice(0, 5).join(', ');
  return ` (served roots: ${shown}${roots.length > 5 ? `, and ${roots.length - 5} more` : ''})`;
}

/** The sources a listing went without, in structured output. */
export const skippedSources = z
  .array(z.object({ source: z.string(), reason: z.enum(['unavailable', 'timeout', 'error']) }))
  .optional()
  .describe(
    'Sources that could not answer during this call (failing, or too slow): their resources are missing from it. They are tried again on every call.',
  );

/** The sentence telling the model which sources were left out, and what to do about it. */
export function skippedLine(skipped: readonly SkippedSource[]): string {
  const names = skipped
    .map(
      (s) =>
        `${s.source} (${s.reason === 'timeout' ? 'too slow' : s.reason === 'unavailable' ? 'unavailable' : 'failed'})`,
    )
    .join(', ');
  return `Left out because they cannot answer right now: ${names}. Their resources are missing from this result; try again later to include them.`;
}

/** Adds the skipped sources to a tool result (structured content, text and `_meta`), when there are any. */
export function withSkipped(result: ToolResult, skipped: readonly SkippedSource[]): ToolResult {
  if (skipped.length === 0) return result;
  const first = result.content[0];
  const content =
    first?.type === 'text'
      ? [
          { type: 'text' as const, text: `${first.text}\n${skippedLine(skipped)}` },
          ...result.content.slice(1),
        ]
      : result.content;
  return {
    ...result,
    content,
    structuredContent: { ...result.structuredContent, skippedSources: [...skipped] },
    _meta: { ...result._meta, [SKIPPED_SOURCES_META_KEY]: [...skipped] },
  };
}
