/**
 * Change detection for s3:// resources, by polling only the prefixes someone subscribes to: one
 * poller per prefix (the "directory" of each watched key), shared by every watch under it, lists
 * that prefix with the '/' delimiter (at most `maxRequests` ListObjectsV2 requests per poll) and
 * compares each key's ETag with the previous poll. A watched key whose ETag changed, or that
 * appeared or disappeared, is reported. Failures and throttling back off (see utils/poller.ts).
 */
import type { Logger } from '../../core/log.js';
import { Poller } from '../utils/poller.js';
import { SharedWatches } from '../utils/refcount.js';

/** Lists one prefix: each key directly under it with its ETag; `complete` false when the bound cut it short. */
export type ListPrefix = (
  prefix: string,
  maxRequests: number,
) => Promise<{ etags: Map<string, string>; complete: boolean }>;

interface PrefixWatch {
  poller: Poller | undefined;
  stopped: boolean;
  etags: Promise<Map<string, string>>;
  listeners: Map<string, Set<() => void>>;
}

export class S3Watches {
  private readonly watches = new SharedWatches<PrefixWatch>((watch) => {
    watch.stopped = true;
    watch.poller?.stop();
  });

  constructor(
    private readonly options: {
      list: ListPrefix;
      intervalMs: number;
      maxRequests: number;
      logger?: Logger | undefined;
      bucket: string;
    },
  ) {}

  /** Watches one key; resolves (once the first listing is in) with the function that stops it. */
  async watch(key: string, onChange: () => void): Promise<() => void> {
    const slash = key.lastIndexOf('/');
    const prefix = slash < 0 ? '' : key.slice(0, slash + 1);
    const { shared, stop } = this.watches.acquire(prefix, () => this.start(prefix));
    let set = shared.listeners.get(key);
    if (set === undefined) shared.listeners.set(key, (set = new Set()));
    const listener = (): void => onChange();
    set.add(listener);
    try {
      await shared.etags;
    } catch (error) {
      set.delete(listener);
      stop();
      throw error;
    }
    return () => {
      set.delete(listener);
      if (set.size === 0 && shared.listeners.get(key) === set) shared.listeners.delete(key);
      stop();
    };
  }

  /** Prefixes polled now. */
  get prefixes(): number {
    return this.watches.size;
  }

  close(): void {
    this.watches.clear();
  }

  private start(prefix: string): PrefixWatch {
    const { list, intervalMs, maxRequests, logger, bucket } = this.options;
    const watch: PrefixWatch = {
      poller: undefined,
      stopped: false,
      etags: list(prefix, maxRequests).then((r) => r.etags),
      listeners: new Map(),
    };
    watch.etags.then(
      () => {
        if (watch.stopped) return;
        watch.poller = new Poller({
          intervalMs,
          check: async () => {
            const previous = await watch.etags;
            const { etags, complete } = await list(prefix, maxRequests);
            watch.etags = Promise.resolve(etags);
            for (const [key, listeners] of watch.listeners) {
              // A key past the bound of an incomplete listing is unknown, not gone.
              if (!complete && !etags.has(key)) continue;
              if (previous.get(key) !== etags.get(key))
                for (const listener of [...listeners]) listener();
            }
          },
          onError: (error, nextInMs) =>
            logger?.warn(
              { err: error, bucket, prefix, nextInMs },
              's3 change poll failed; backing off',
            ),
        });
      },
      () => undefined,
    );
    return watch;
  }
}
