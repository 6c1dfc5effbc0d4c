/**
 * 2025-era subscriptions: `resources/subscribe` / `resources/unsubscribe` per connection or session,
 * and the list-changed notifications a 2025 client receives for as long as it is connected.
 * Everything is released when the connection or session closes.
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Logger } from '../core/log.js';
import type { Subscriptions } from '../core/subscriptions.js';
import { toProtocolError } from './errors.js';

export function installLegacySubscriptions(server: Server, subscriptions: Subscriptions, logger: Logger): void {
  const report = (error: unknown): void => logger.debug({ err: error }, 'could not deliver a notification');
  const channel = subscriptions.channel({
    updated: (uri) => void server.sendResourceUpdated({ uri }).catch(report),
    listChanged: () => void server.sendResourceListChanged().catch(report),
    promptsChanged: () => void server.sendPromptListChanged().catch(report),
    toolsChanged: () => void server.sendToolListChanged().catch(report),
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
