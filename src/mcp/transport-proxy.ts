/**
 * A transport seen through a proxy whose `send` is another function: everything else — properties,
 * methods (bound to the transport itself), and the callbacks the SDK sets on it — reaches the
 * transport unchanged. For the edges that rewrite or route what goes out (the legacy not-found code,
 * plain JSON answers).
 */
import type { Transport } from '@modelcontextprotocol/server';

export function withSend<T extends Transport>(transport: T, send: Transport['send']): T {
  return new Proxy(transport, {
    get(target, key, receiver) {
      if (key === 'send') return send;
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set(target, key, value) {
      return Reflect.set(target, key, value);
    },
  });
}
