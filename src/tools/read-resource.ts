/**
 * `read_resource`: the content of one resource, for hosts that only call tools, as blocks the model
 * can read (read-content.ts): a text resource's text itself, an image or audio as such, a binary's
 * description and how to read it, beside the `resource_link`/`resource` blocks hosts attach.
 * `structuredContent` carries the content's metadata only (URI, type, encoding, size), so a read
 * near the response cap is never sent twice. A file over the read cap is an error naming its size, the limit and, when its source
 * serves a partial-read template (`…{?lines}`), how to read it in parts.
 */
import { z } from 'zod';
import { MAX_PAGE_SIZE, type Registry } from '../core/registry.js';
import { withProgress } from '../core/tool-progress.js';
import { defineOneRoundTool, type Tool, type ToolResult } from '../core/tools.js';
import type { Principal } from '../core/principal.js';
import type { ResourceContents, ResourceTemplateInfo } from '../core/types.js';
import { parseUri } from '../core/uri.js';
import { isReservoirError, type ReservoirError } from '../core/errors.js';
import { base64Bytes, modelBlocks } from './read-content.js';
import { fromReservoirError, quote, READ_ONLY, servedRoots, toolError } from './shared.js';

export const READ_RESOURCE = 'read_resource';
/** The query a partial-read template adds; `lines=START-END`. */
const LINES_SUFFIX = '{?lines}';
/** The first part suggested when a file is too large to read whole. */
const SUGGESTED_LINES = '1-500';

const input = z.strictObject({
  uri: z
    .string()
    .min(1)
    .describe(
      'The resource URI, exactly as list_resources or find_resources gave it (e.g. file:///srv/docs/guide.md). A directory URI (ending in /) reads as a JSON listing of its children.',
    ),
});

const contentInfo = z.object({
  uri: z.string(),
  mimeType: z.string().optional(),
  encoding: z
    .enum(['text', 'base64'])
    .describe(
      'text: UTF-8 text, in a text block; base64: binary content, in an image, audio or embedded resource block.',
    ),
  size: z
    .number()
    .int()
    .nonnegative()
    .describe('Size of the content in bytes (decoded, for base64).'),
});

const output = z.object({
  uri: z.string().describe('The URI that was read.'),
  contents: z
    .array(contentInfo)
    .describe('What was read, one entry per content; the content itself is in the content blocks.'),
});

export function readResourceTool(registry: Registry): Tool {
  return defineOneRoundTool({
    name: READ_RESOURCE,
    title: 'Read a resource',
    description:
      'Read the content of one resource by its URI (as given by list_resources or find_resources). ' +
      'Returns the text of a text file; an image or audio as such; for other binary files, their type and size, how to read them as text, and their bytes as an embedded resource. ' +
      'A directory URI (ending in /) returns a JSON listing of its children, with their URIs. ' +
      'Very large files cannot be read whole; the error then says how to read them in parts when the source allows it.',
    input,
    output,
    annotations: { title: 'Read a resource', ...READ_ONLY },
    async call({ uri }, ctx): Promise<ToolResult> {
      // Audited like resources/read: the URI as asked for, and how the read ended.
      ctx.audit?.({ uri });
      let contents: ResourceContents[];
      try {
        contents = (await withProgress(ctx, `reading ${uri}`, () => registry.read(uri, ctx)))
          .contents;
      } catch (error) {
        if (isReservoirError(error)) ctx.audit?.({ code: error.code });
        return readError(registry, uri, error, ctx.principal);
      }
      const described = contents.map(describe);
      ctx.audit?.({ bytes: described.reduce((sum, c) => sum + c.size, 0) });
      return { content: modelBlocks(contents), structuredContent: { uri, contents: described } };
    },
  });
}

function describe(content: ResourceContents): z.output<typeof contentInfo> {
  const info: z.output<typeof contentInfo> =
    'blob' in content
      ? { uri: content.uri, encoding: 'base64', size: base64Bytes(content.blob) }
      : { uri: content.uri, encoding: 'text', size: Buffer.byteLength(content.text, 'utf8') };
  if (content.mimeType !== undefined) info.mimeType = content.mimeType;
  return info;
}

function readError(
  registry: Registry,
  uri: string,
  error: unknown,
  principal: Principal | undefined,
): ToolResult {
  if (!isReservoirError(error)) throw error;
  switch (error.code) {
    case 'not_found':
    case 'denied':
      return toolError(
        `No resource at ${uri}. Use list_resources or find_resources to see what exists, and pass a URI exactly as they give it.`,
      );
    case 'invalid_uri':
      return toolError(
        `${error.message}. Pass an absolute URI exactly as list_resources or find_resources gives it${servedRoots(registry, principal)}.`,
      );
    case 'too_large':
      return tooLarge(registry, uri, error);
    default:
      return fromReservoirError(error, READ_RESOURCE);
  }
}

function tooLarge(registry: Registry, uri: string, error: ReservoirError): ToolResult {
  const size = Number(error.data['size']);
  const limit = Number(error.data['limit']);
  const measure = error.data['measure'];
  const href = parseUri(uri).href;
  if (measure === 'listing') {
    return toolError(
      `The directory ${uri} has too many entries to list in one read (its listing is ${size} bytes, over the limit of ${limit} bytes). ` +
        `Use find_resources with under=${quote(href)} to page through what it holds.`,
    );
  }
  const what = measure === 'encoded' ? `${size} bytes once encoded for sending` : `${size} bytes`;
  const head = `${uri} is too large to read whole: it is ${what}, over the limit of ${limit} bytes.`;
  // The partial reads the source itself named (a whole resource over its read limit): byte
  // ranges where lines are no use (a binary, or a source without line ranges).
  const parts = error.data['parts'] as { bytes?: string; lines?: string } | undefined;
  const template = partialReadTemplate(registry, href);
  if (parts?.bytes !== undefined && (parts.lines === undefined || template === undefined))
    return toolError(
      `${head} Read it in byte ranges instead: call read_resource with the URI ${parts.bytes} (bytes=START-END, 0-based and inclusive), then the following ranges, until you have what you need.`,
    );
  if (template === undefined)
    return toolError(`${head} This source offers no way to read part of it.`);
  const url = new URL(href);
  if (url.searchParams.has('lines')) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(url.searchParams.get('lines') ?? '');
    if (range !== null && (range[2] === undefined || range[1] === range[2])) {
      return toolError(
        `${head} That is a single line, so this part of the resource cannot be read through read_resource.`,
      );
    }
    return toolError(
      `${head} Ask for fewer lines: narrow the lines=START-END range in the URI and read the rest in further calls.`,
    );
  }
  const part = `${href}${url.search === '' ? '?' : '&'}lines=${SUGGESTED_LINES}`;
  return toolError(
    `${head} If it is text, read it in parts instead: call read_resource with the URI ${part} (lines=START-END, 1-based and inclusive), ` +
      `then the following ranges, until you have what you need. (Partial reads follow the resource template ${template.uriTemplate}.)`,
  );
}

/**
 * The partial-read template serving `href`, if its source has one: a listed template ending in
 * `{?lines}` whose literal prefix `href` starts with, owned by the same mount as `href`.
 */
export function partialReadTemplate(
  registry: Registry,
  href: string,
): ResourceTemplateInfo | undefined {
  const provider = registry.route(href);
  if (provider === undefined) return undefined;
  let cursor: string | undefined;
  do {
    const page = registry.listTemplates(cursor, { limit: MAX_PAGE_SIZE });
    for (const template of page.items) {
      if (!template.uriTemplate.endsWith(LINES_SUFFIX)) continue;
      const brace = template.uriTemplate.indexOf('{');
      const prefix = template.uriTemplate.slice(0, brace);
      if (prefix !== '' && href.startsWith(prefix) && registry.route(prefix) === provider)
        return template;
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return undefined;
}
