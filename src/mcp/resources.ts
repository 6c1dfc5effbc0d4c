/**
 * `resources/list`, `resources/templates/list` and `resources/read`: translation between the SDK's
 * request shapes and the Registry.
 */
import type { McpRequestContext, Server } from '@modelcontextprotocol/server';
import { blobLength } from '../core/base64-blob.js';
import type { BlobCaps } from '../core/blob-caps.js';
import type { Registry } from '../core/registry.js';
import { readerOf } from './blob-cap-check.js';
import type { ReadResult, ResourceTemplateInfo } from '../core/types.js';
import { SKIPPED_SOURCES_META_KEY } from '../core/source-health.js';
import type { AppResource } from './explorer-app.js';
import { guarded, type Guard } from './guarded-call.js';
import { TEMPLATE_ICONS } from './inline-icons.js';
import { inputContext } from './input.js';
import { requestOrigin, withResourceIcons } from './resource-icons.js';
import { definedProps } from '../core/defined.js';

export function installResourceHandlers(
  server: Server,
  ctx: McpRequestContext,
  registry: Registry,
  guard: Guard,
  appResources: readonly AppResource[] = [],
  blobCaps?: BlobCaps,
): void {
  server.setRequestHandler('resources/list', (request, handlerCtx) =>
    guarded(guard, handlerCtx, 'resources/list', undefined, async (call) => {
      const page = await registry.listResources(request.params?.cursor, call);
      // Each resource gets the icon of its kind: over HTTP by URL on the origin the client reached,
      // over stdio inline only when the config asks (hints.resourceIcons).
      const origin = requestOrigin(handlerCtx.http?.req ?? ctx.requestInfo);
      return {
        resources: withResourceIcons(page.items, origin, registry.resourceIcons),
        ...definedProps({
          nextCursor: page.nextCursor,
          _meta:
            page.skipped === undefined ? undefined : { [SKIPPED_SOURCES_META_KEY]: page.skipped },
        }),
      };
    }),
  );

  server.setRequestHandler('resources/templates/list', (request, handlerCtx) =>
    guarded(guard, handlerCtx, 'resources/templates/list', undefined, async (call) => {
      const page = registry.listTemplates(request.params?.cursor, { principal: call.principal });
      const resourceTemplates = page.items.map(describeTemplate);
      return page.nextCursor === undefined
        ? { resourceTemplates }
        : { resourceTemplates, nextCursor: page.nextCursor };
    }),
  );

  server.setRequestHandler('resources/read', (request, handlerCtx) =>
    guarded(guard, handlerCtx, 'resources/read', request.params.uri, async (call) => {
      // An MCP App page, for the clients it is offered to; to any other it is as missing as any unknown URI.
      const app = appResources.find((resource) => resource.uri === request.params.uri);
      if (app !== undefined && app.offeredTo(inputContext(server, handlerCtx).clientCapabilities))
        return { contents: [app.read()] };
      const result = await registry.read(request.params.uri, call);
      blobCaps?.check(
        result.contents,
        readerOf(server, handlerCtx.mcpReq.envelope, call.principal),
      );
      call.bytes = contentBytes(result);
      // ttlMs is a 2026-07-28 field: added to modern results only, never to a 2025-era answer.
      return ctx.era === 'modern' && result.ttlMs !== undefined
        ? { contents: result.contents, ttlMs: result.ttlMs }
        : { contents: result.contents };
    }),
  );
}

/** Bytes of content a read returned (decoded size of blobs), for rate limits and the audit log. */
export function contentBytes(result: ReadResult): number {
  let bytes = 0;
  for (const content of result.contents)
    bytes +=
      'blob' in content
        ? Math.floor((blobLength(content) * 3) / 4)
        : Buffer.byteLength(content.text);
  return bytes;
}

/** The wire description of a template: its descriptive fields, never its handlers. */
function describeTemplate(template: ResourceTemplateInfo): ResourceTemplateInfo {
  const { uriTemplate, name, title, description, mimeType, icons } = template;
  return {
    uriTemplate,
    name,
    ...definedProps({ title, description, mimeType }),
    icons: icons ?? TEMPLATE_ICONS,
  };
}
