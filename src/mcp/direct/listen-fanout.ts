/**
 * `notifications/resources/updated` to 2026-07-28 listen streams, written straight to their sockets.
 *
 * The SDK's listen router would stamp, serialise, encode and enqueue each notification once per
 * stream, and two Web-stream hops would carry it to Node's socket: with hundreds of streams on one
 * URI that, not the socket write, was most of the CPU time of a change. Here a change is encoded
 * once per distinct subscription id (most clients use the same few JSON-RPC ids) and the same bytes
 * are written to every stream on the URI; the SDK still serves the listen request itself (validation,
 * the acknowledgement, keep-alives, list changes, the closing result), on the same response.
 *
 * A stream is registered only for the URIs its acknowledgement carried, and only after that
 * acknowledgement was written, so a notification never precedes it. A client that stops reading is
 * cut off once `maxBufferedBytes` wait for it, rather than buffering without bound.
 */
import type { ServerResponse } from 'node:http';
import { SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';

/** What one client may leave unread before its stream is closed. */
export const DEFAULT_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

interface Stream {
  /** The listen request's id as JSON: the subscription id stamped on each notification. */
  readonly idJson: string;
  readonly out: ServerResponse;
}

export class ListenFanout {
  private readonly byUri = new Map<string, Set<Stream>>();
  /** Notifications written (one per stream per change), for tests and metrics. */
  written = 0;

  constructor(private readonly maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES) {}

  /** Delivers changes of `uris` to `out` until the returned function is called. */
  add(uris: readonly string[], id: string | number, out: ServerResponse): () => void {
    const stream: Stream = { idJson: JSON.stringify(id), out };
    for (const uri of uris) {
      let set = this.byUri.get(uri);
      if (set === undefined) this.byUri.set(uri, (set = new Set()));
      set.add(stream);
    }
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      for (const uri of uris) {
        const set = this.byUri.get(uri);
        set?.delete(stream);
        if (set?.size === 0) this.byUri.delete(uri);
      }
    };
  }

  /** Streams registered on `uri`. */
  count(uri: string): number {
    return this.byUri.get(uri)?.size ?? 0;
  }

  updated(uri: string): void {
    const streams = this.byUri.get(uri);
    if (streams === undefined) return;
    // The SDK's frame, byte for byte: `event: message`, then the notification with the listen id stamped in `_meta`.
    const head = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":${JSON.stringify(uri)},"_meta":{${JSON.stringify(SUBSCRIPTION_ID_META_KEY)}:`;
    const frames = new Map<string, Buffer>();
    for (const stream of streams) {
      const { out } = stream;
      if (out.destroyed || out.writableEnded) continue;
      if (out.writableLength > this.maxBufferedBytes) {
        out.destroy(new Error('listen stream client is not reading'));
        continue;
      }
      let frame = frames.get(stream.idJson);
      if (frame === undefined)
        frames.set(stream.idJson, (frame = Buffer.from(`${head}${stream.idJson}}}}\n\n`)));
      out.write(frame);
      this.written += 1;
    }
  }
}
