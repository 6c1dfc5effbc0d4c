/**
 * The SDK edge: builds SDK server instances whose `resources/*` handlers are Reservoir's. The SDK
 * does framing, validation, version negotiation and the era-specific wire shapes (`resultType`,
 * `_meta`, `server/discover`); this module only translates between it and the Registry.
 *
 * One factory serves both eras: the serving entries call it per stdio connection, per 2025 HTTP
 * session and per 2026 HTTP request. Instances are cheap: a few closures over the shared Registry.
 */
import { createRequire } from 'node:module';
// The low-level Server is the SDK's extension point for custom request handlers: McpServer's own
// resource registry answers every resource in one response, which is what Reservoir replaces.
import { Server, type CacheHint, type McpRequestContext, type McpServerFactory, type Transport } from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import type { Registry } from '../core/registry.js';
import type { Subscriptions } from '../core/subscriptions.js';
import { toProtocolError, withLegacyNotFoundCode } from './errors.js';

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

export const SERVER_NAME = 'reservoir';
export const SERVER_VERSION = version;

export interface McpServerOptions {
  registry: Registry;
  subscriptions: Subscriptions;
  logger: Logger;
  /** Shown to clients in `initialize` / `server/discover`. */
  instructions?: string;
  /** Cache hints for list results (2026-07-28). Reads use each provider's own freshness. */
  listCacheHint?: CacheHint;
  templatesCacheHint?: CacheHint;
}

/** Returns the factory both serving entries (stdio, HTTP) build their instances with. */
export function createServerFactory(options: McpServerOptions): McpServerFactory {
  const { registry, subscriptions, logger } = options;
  const listHint: CacheHint = options.listCacheHint ?? { ttlMs: 0, cacheScope: 'public' };
  const templatesHint: CacheHint = options.templatesCacheHint ?? { ttlMs: 60_000, cacheScope: 'public' };

  return (ctx: McpRequestContext) => {
    const server = new Server(
      { name: SERVER_NAME, version: SERVER_VERSION },
      {
        capabilities: {
          resources: {
            ...(subscriptions.canSubscribe ? { subscribe: true } : {}),
            ...(subscriptions.canListChange ? { listChanged: true } : {}),
          },
        },
        ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
        cacheHints: {
          'resources/list': listHint,
          'resources/templates/list': templatesHint,
          'resources/read': { ttlMs: 0, cacheScope: 'public' },
          'server/discover': { ttlMs: 60_000, cacheScope: 'public' },
        },
      },
    );
    server.onerror = (error) => logger.debug({ err: error }, 'protocol error');

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
        return page.nextCursor === undefined
          ? { resourceTemplates: page.items }
          : { resourceTemplates: page.items, nextCursor: page.nextCursor };
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

    if (ctx.era === 'legacy') {
      const connect = server.connect.bind(server);
      server.connect = (transport: Transport) => connect(withLegacyNotFoundCode(transport));
      installLegacySubscriptions(server, subscriptions, logger);
    }
    return server;
  };
}

/**
 * 2025-era subscriptions: `resources/subscribe` / `resources/unsubscribe` per connection or session,
 * and `list_changed` for as long as it is open. Everything is released when it closes.
 */
function installLegacySubscriptions(server: Server, subscriptions: Subscriptions, logger: Logger): void {
  const report = (error: unknown): void => logger.debug({ err: error }, 'could not deliver a notification');
  const channel = subscriptions.channel({
    updated: (uri) => void server.sendResourceUpdated({ uri }).catch(report),
    listChanged: () => void server.sendResourceListChanged().catch(report),
  });
  if (subscriptions.canListChange) {
    server.oninitialized = () => void channel.addList().catch(report);
  }
  const previous = server.onclose;
  server.onclose = () => {
    channel.close();
    previous?.();
  };
  if (!subscriptions.canSubscribe) return;
  server.setRequestHandler('resources/subscribe', async (request) => {
    try {
      const uri = request.params.uri;
      // Subscribing twice to one URI is one subscription, as unsubscribing once ends it.
      if (!channel.has(uri)) await channel.add(uri);
      return {};
    } catch (error) {
      throw toProtocolError(error, logger);
    }
  });
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    channel.remove(request.params.uri);
    return {};
  });
}
