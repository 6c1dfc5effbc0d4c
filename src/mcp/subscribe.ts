/**
 * 2025-era subscriptions: `resources/subscribe` / `resources/unsubscribe` per connection or session,
 * and the list-changed notifications a 2025 client receives for as long as it is connected.
 * Everything is released when the connection or session closes.
 *
 * The handlers' work is also offered as the server's LegacySubscriber, for the stdio wire to answer
 * a plain subscribe or unsubscribe without the SDK's dispatch (mcp/direct/subscribe.ts): the same
 * channel, policy steps, principal and error mapping, and the records it makes go where a
 * handler's would (LoggingServer.asRequest).
 */
import type { Server } from '@modelcontextprotocol/server';
import type { Channel, Subscriptions } from '../core/subscriptions.js';
import type { PolicyContext } from '../policy/index.js';
import { guarded, guardedAs, type Caller, type Guard } from './guarded-call.js';
import { LoggingServer } from './logging-server.js';

/** What a 2025-era server answers to `resources/subscribe` and `resources/unsubscribe`, for a caller given directly. */
export interface LegacySubscriber {
  /** Subscribes as `caller` (through the policy steps; errors mapped as a handler's). */
  subscribe(caller: Caller, uri: string): Promise<Record<string, never>>;
  unsubscribe(caller: Caller, uri: string): Record<string, never>;
}

const channels = new WeakMap<Server, Channel>();
const subscribers = new WeakMap<Server, LegacySubscriber>();

/** The subscriptions of a 2025-era server instance (cluster mode records and restores them). */
export function legacyChannel(server: Server): Channel | undefined {
  return channels.get(server);
}

/**
 * The subscribe and unsubscribe of a 2025-era server instance, when they may be answered without
 * its SDK dispatch: undefined where the server has no such handlers (no source can watch) or traces
 * its operations (the trace context is the SDK path's).
 */
export function legacySubscriber(server: Server): LegacySubscriber | undefined {
  return subscribers.get(server);
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
  const subscribe =
    (uri: string) =>
    async (call: PolicyContext): Promise<Record<string, never>> => {
      // Subscribing twice to one URI is one subscription, as unsubscribing once ends it.
      if (!channel.has(uri)) await channel.add(uri, call.principal);
      return {};
    };
  const unsubscribe = (uri: string): Record<string, never> => {
    channel.remove(uri);
    return {};
  };
  server.setRequestHandler('resources/subscribe', (request, handlerCtx) =>
    guarded(
      guard,
      handlerCtx,
      'resources/subscribe',
      request.params.uri,
      subscribe(request.params.uri),
    ),
  );
  server.setRequestHandler('resources/unsubscribe', async (request) =>
    unsubscribe(request.params.uri),
  );
  if (guard.tracer !== undefined) return;
  const asRequest =
    server instanceof LoggingServer
      ? <T>(caller: Caller, work: () => T): T => server.asRequest(caller.principal, work)
      : <T>(_caller: Caller, work: () => T): T => work();
  subscribers.set(server, {
    subscribe: (caller, uri) =>
      asRequest(caller, () => guardedAs(guard, caller, 'resources/subscribe', uri, subscribe(uri))),
    unsubscribe: (caller, uri) => asRequest(caller, () => unsubscribe(uri)),
  });
}
