/**
 * A plain 2025-era `resources/subscribe` or `resources/unsubscribe` (plain-read.ts: `params: { uri }`
 * alone) answered without the SDK's dispatch, on a stdio connection (stdio.ts). What answers it is
 * the connection's server instance's own subscriber (mcp/subscribe.ts): its channel (the one the
 * SDK handler adds to, so notifications arrive as before), the policy steps as the local user, the
 * errors mapped once and written as the SDK writes them on a 2025-era connection (not found: -32002).
 * What the SDK skips is its work around the handler: the schema pass over the message and the
 * request, the handler context and its AbortController, the result's validation. A subscribe the
 * SDK would refuse before its handler — params that are not a `uri` string, anything beyond it —
 * is not plain and goes to the SDK. test/e2e/stdio-direct-subscribe.test.ts compares the answers
 * with the SDK's over the built CLI's pipes.
 */
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import type { Cancellation } from '../../core/cancellation.js';
import { LOCAL_PRINCIPAL } from '../../core/principal.js';
import type { LegacySubscriber } from '../subscribe.js';
import type { Caller } from '../guarded-call.js';
import type { EncodedLine } from './base64-run.js';
import { plainRequestOf, type PlainRead } from './plain-read.js';
import { encodeAnswer } from './read.js';

export type SubscribeMethod = 'resources/subscribe' | 'resources/unsubscribe';

export interface PlainSubscribe extends PlainRead {
  method: SubscribeMethod;
}

/** The subscribe or unsubscribe a message asks for when it is a plain 2025-era one; undefined otherwise. */
export function plainSubscribeOf(message: JSONRPCMessage): PlainSubscribe | undefined {
  const method = 'method' in message ? message.method : undefined;
  if (method !== 'resources/subscribe' && method !== 'resources/unsubscribe') return undefined;
  const plain = plainRequestOf(message, method, 'legacy');
  return plain === undefined ? undefined : { id: plain.id, uri: plain.uri, method };
}

const noCarrier = (): Record<string, string> => ({});

/** Answers `request` through `subscriber` as the local user (stdio); resolves the encoded answer. */
export function answerSubscribe(
  subscriber: LegacySubscriber,
  request: { id: RequestId; method: SubscribeMethod; uri: string },
  cancel: Cancellation,
): Promise<EncodedLine> {
  const caller: Caller = { principal: LOCAL_PRINCIPAL, signal: cancel, carrier: noCarrier };
  const { id, uri } = request;
  return encodeAnswer(id, false, () =>
    request.method === 'resources/subscribe'
      ? subscriber.subscribe(caller, uri)
      : Promise.resolve(subscriber.unsubscribe(caller, uri)),
  );
}
