/**
 * When to say "serving MCP over stdio: …". Logging the first line loads the logger (pino, ~40 ms
 * on a busy machine), so it waits until the server has written its first answer — the host's
 * handshake is never delayed by it — or until `fallbackMs` of silence, whichever comes first.
 */
import type { Writable } from 'node:stream';

/**
 * Calls `announce` once, just after the first write to `stream`, or after `fallbackMs`; the function
 * returned makes it happen now if it has not yet (at shutdown, so the log always says what was served).
 */
export function announceAfterFirstWrite(
  stream: Writable,
  announce: () => void,
  fallbackMs = 1000,
): () => void {
  let done = false;
  const own = Object.getOwnPropertyDescriptor(stream, 'write');
  let restored = false;
  const restore = (): void => {
    if (restored) return;
    restored = true;
    if (own === undefined) delete (stream as { write?: unknown }).write;
    else Object.defineProperty(stream, 'write', own);
  };
  const once = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    restore();
    announce();
  };
  const timer = setTimeout(once, fallbackMs);
  timer.unref();
  // A property shadows the stream's write for exactly one call, then puts the original back.
  const original = stream.write;
  Object.defineProperty(stream, 'write', {
    configurable: true,
    writable: true,
    value: function (this: Writable, ...args: Parameters<Writable['write']>): boolean {
      restore();
      const result = original.apply(this, args);
      setImmediate(once);
      return result;
    },
  });
  return once;
}
