// The S3 change feed (`onChanges`, providers/s3/changes.ts) compares each poll's listing with the
// last: a key added, changed (another ETag) or gone is reported by its URI, once; a key past the
// request bound of an incomplete listing is unknown, not gone, and keeps its last ETag; a key with
// a dot segment (no URI names it) is never reported. The listings are scripted: each poll takes the
// next one, and a poll is known done when the next one is asked for (no clock is read).
import { afterEach, describe, expect, it } from 'vitest';
import type { ResourceChange } from '../../src/core/types.js';
import { keyUri } from '../../src/providers/s3/address.js';
import { s3ChangeFeed } from '../../src/providers/s3/changes.js';

interface Listing {
  etags: Map<string, string>;
  complete: boolean;
}

const BUCKET = 'feed';
const stops: Array<() => void> = [];

afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** A feed over `listings` (the first is the baseline); `poll()` waits until the next one was taken. */
async function feed(listings: Listing[]) {
  // each report with the listing it came from (the last one taken when it was made)
  const reported: Array<{ listing: number; changes: ResourceChange[] }> = [];
  let taken = 0;
  let polled = 0;
  let onTaken: (() => void) | undefined;
  const stop = await s3ChangeFeed(
    {
      bucket: BUCKET,
      prefix: '',
      intervalMs: 1,
      maxRequests: 10,
      listAll: (prefix, maxRequests) => {
        expect([prefix, maxRequests]).toEqual(['', 10]);
        const listing = listings[taken];
        taken += 1;
        onTaken?.();
        // Past the script the poll never ends, so nothing is compared after it.
        return listing === undefined ? new Promise(() => undefined) : Promise.resolve(listing);
      },
    },
    (changes) => reported.push({ listing: taken - 1, changes }),
  );
  stops.push(stop);
  return {
    /** The URIs the next poll reported (none: []), once the poll after it has begun. */
    async poll(): Promise<string[]> {
      polled += 1;
      const done = (): boolean => taken > polled + 1;
      if (!done())
        await new Promise<void>((resolve) => {
          onTaken = () => {
            if (done()) resolve();
          };
        });
      return reported
        .filter((report) => report.listing === polled)
        .flatMap((report) => report.changes.map((change) => change.uri))
        .sort();
    },
  };
}

function listing(entries: Record<string, string>, complete = true): Listing {
  return { etags: new Map(Object.entries(entries)), complete };
}

const uris = (...keys: string[]): string[] => keys.map((key) => keyUri(BUCKET, key)).sort();

describe('s3 change feed', () => {
  it('reports a key added, changed or removed, each once, and nothing when nothing moved', async () => {
    const f = await feed([
      listing({ a: '1', b: '1', c: '1' }),
      listing({ a: '1', b: '2', d: '1' }),
      listing({ a: '1', b: '2', d: '1' }),
    ]);
    expect(await f.poll()).toEqual(uris('b', 'c', 'd'));
    expect(await f.poll()).toEqual([]);
  });

  it('takes a key past the bound of an incomplete listing as unknown, and reports it once the listing reaches it', async () => {
    const f = await feed([
      listing({ a: '1', b: '1', c: '1' }),
      // cut short after 'a': 'b' and 'c' are not gone
      listing({ a: '1' }, false),
      // 'b' changed since the baseline, 'c' is gone
      listing({ a: '1', b: '2' }),
      listing({ a: '1', b: '2' }),
    ]);
    expect(await f.poll()).toEqual([]);
    expect(await f.poll()).toEqual(uris('b', 'c'));
    expect(await f.poll()).toEqual([]);
  });

  it('reports a key added or changed within an incomplete listing, and none as removed', async () => {
    const f = await feed([
      listing({ a: '1', b: '1', m: '1', z: '1' }),
      listing({ a: '2', c: '1', m: '1' }, false),
    ]);
    // 'b' sorts before the last key listed, yet an incomplete listing says nothing of it gone.
    expect(await f.poll()).toEqual(uris('a', 'c'));
  });

  it('never reports a key no URI names (a dot segment)', async () => {
    const f = await feed([
      listing({ 'x/../y': '1', 'x/./z': '1', ok: '1' }),
      listing({ 'x/../y': '2', ok: '2', 'w/../v': '1' }),
    ]);
    expect(await f.poll()).toEqual(uris('ok'));
  });

  it('finds the three keys that moved among 100,000', async () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `dir-${i % 100}/key-${i}.txt`);
    const first = new Map(keys.map((key) => [key, `"etag-${key}"`]));
    const second = new Map(first);
    second.set('dir-7/key-50007.txt', '"another"');
    second.delete('dir-99/key-99999.txt');
    second.set('dir-0/new.txt', '"new"');
    const f = await feed([
      { etags: first, complete: true },
      { etags: second, complete: true },
    ]);
    expect(await f.poll()).toEqual(
      uris('dir-0/new.txt', 'dir-7/key-50007.txt', 'dir-99/key-99999.txt'),
    );
  });
});
