/**
 * 2025-era subscriptions: `resources/subscribe` / `resources/unsubscribe` per connection or session,
 * and the list-changed notifications a 2025 client receives for as long as it is connected.
 * Everything is released when the connection or session closes.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Channel, Subscriptions } from '../core/subscriptions.js';
import { guarded, type Guard } from './guarded-call.js';

const channels = new WeakMap<Server, Channel>();

/** The subscriptions of a 2025-era server instance (cluster mode records and restores them). */
export function legacyChannel(server: Server): Channel | undefined {
  return channels.get(server);
}

export function installLegacySubscriptions(
  server: Server,
  subscriptions: Subscriptions,
  guard: Guard,
): void {
  const logger = guard.logger;
  const report = (error: unknown): void =>
    logger.debug({ err: error }, 'could not deliver a notification');
  const channel = subscriptions.channel({
    updated: (uri) => void server.sendResourceUpdated({ uri }).catch(report),
    listChanged: () => void server.sendResourceListChanged().catch(report),
    promptsChanged: () => void server.sendPromptListChanged().catch(report),
    toolsChanged: () => void server.sendToolListChanged().catch(report),
  });
  channels.set(server, channel);
  if (subscriptions.canListChange) {
    server.oninitialized = () => void channel.addList().catch(report);
  }
  const previous = server.onclose;
  server.onclose = () => {
    channel.close();
    previous?.();
  };
  if (!subscriptions.canSubscribe) return;
  server.setRequestHandler('resources/subscribe', (request, handlerCtx) =>
    guarded(guard, handlerCtx, 'resources/subscribe', request.params.uri, async (call) => {
      const uri = request.params.uri;
      // Subscribing twice to one URI is one subscription, as unsubscribing once ends it.
      if (!channel.has(uri)) await channel.add(uri, call.principal);
      return {};
    }),
  );
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    channel.remove(request.params.uri);
    return {};
  });
}
