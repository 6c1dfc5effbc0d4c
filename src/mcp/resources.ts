/**
 * `resources/list`, `resources/templates/list` and `resources/read`: translation between the SDK's
 * request shapes and the Registry.
 */
import type { McpRequestContext, Server } from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import type { Registry } from '../core/registry.js';
import type { ResourceTemplateInfo } from '../core/types.js';
import { toProtocolError } from './errors.js';

export function installResourceHandlers(server: Server, ctx: McpRequestContext, registry: Registry, logger: Logger): void {
  server.setRequestHandler('resources/list', async (request, handlerCtx) => {
    try {
      const page = await registry.listResources(request.params?.cursor, { signal: handlerCtx.mcpReq.signal });
      return page.nextCursor === undefined ? { resources: page.items } : { resources: page.items, nextCursor: page.nextCursor };
    } catch (error) {
      throw toProtocolError(error, logger);
    }
  });

  server.setRequestHandler('resources/templates/list', async (request) => {
    try {
      const page = registry.listTemplates(request.params?.cursor);
      const resourceTemplates = page.items.map(describeTemplate);
      return page.nextCursor === undefined ? { resourceTemplates } : { resourceTemplates, nextCursor: page.nextCursor };
    } catch (error) {
      throw toProtocolError(error, logger);
    }
  });

  server.setRequestHandler('resources/read', async (request, handlerCtx) => {
    try {
      const result = await registry.read(request.params.uri, { signal: handlerCtx.mcpReq.signal });
      // ttlMs is a 2026-07-28 field: added to modern results only, never to a 2025-era answer.
      return ctx.era === 'modern' && result.ttlMs !== undefined
        ? { contents: result.contents, ttlMs: result.ttlMs }
        : { contents: result.contents };
    } catch (error) {
      throw toProtocolError(error, logger);
    }
  });
}

/** The wire description of a template: its descriptive fields, never its handlers. */
function describeTemplate(template: ResourceTemplateInfo): ResourceTemplateInfo {
  const { uriTemplate, name, title, description, mimeType } = template;
  return {
    uriTemplate,
    name,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    ...(mimeType === undefined ? {} : { mimeType }),
  };
}
