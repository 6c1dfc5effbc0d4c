// How a member's copy of a 2025-era session follows the record another member edited
// (http/session-follow.ts), against an in-memory directory that counts its reads: the record is
// read only when the copy is behind the edit the word names, and a copy holding the GET stream
// says it follows either way.
import { describe, expect, it } from 'vitest';
import { Serial } from '../../src/core/serial.js';
import type { Session } from '../../src/http/session-build.js';
import type { SessionDirectory, SessionRecord } from '../../src/http/session-directory.js';
import { followRecord } from '../../src/http/session-follow.js';

const ID = 'session-1';

function recordAt(version: number | undefined, subscriptions: string[]): SessionRecord {
  const record: SessionRecord = { owner: 'anonymous:t', quota: 'q', init: {}, subscriptions };
  return version === undefined ? record : { ...record, version };
}

/** A directory holding `stored`: what `followRecord` uses of one, with the reads and acks it saw. */
function directoryHolding(stored: SessionRecord | undefined) {
  const seen = { finds: 0, synced: [] as number[] };
  const directory = {
    find: async (id: string) => {
      seen.finds += 1;
      return id === ID ? stored : undefined;
    },
    synced: (id: string, version: number) => {
      if (id === ID) seen.synced.push(version);
    },
  } as Partial<SessionDirectory> as SessionDirectory;
  return { directory, seen };
}

/** A copy of the session holding `record`, with `streams` GET streams, and the syncs applied to it. */
function copyHolding(record: SessionRecord | undefined, streams: number) {
  const applied: string[][] = [];
  const session = {
    record,
    streams,
    serial: new Serial(),
    sync: async (uris: string[]) => void applied.push(uris),
  } as Partial<Session> as Session;
  return { session, applied };
}

describe('a copy of a session following its record', () => {
  it('reads and applies the record when the word names an edit past the copy, and says it follows when it holds the stream', async () => {
    const { directory, seen } = directoryHolding(recordAt(3, ['mem://b', 'mem://a']));
    const { session, applied } = copyHolding(recordAt(2, ['mem://a']), 1);
    await followRecord(directory, ID, session, 3);
    expect(seen.finds).toBe(1);
    expect(applied).toEqual([['mem://b', 'mem://a']]);
    expect(session.record).toMatchObject({ version: 3, subscriptions: ['mem://a', 'mem://b'] });
    expect(seen.synced).toEqual([3]);
  });

  it('does not read the record when the copy already follows the edit the word names or a later one, and still says it follows', async () => {
    const { directory, seen } = directoryHolding(recordAt(5, ['mem://a']));
    const { session, applied } = copyHolding(recordAt(5, ['mem://a']), 1);
    await followRecord(directory, ID, session, 4);
    await followRecord(directory, ID, session, 5);
    expect(seen.finds).toBe(0);
    expect(applied).toEqual([]);
    expect(seen.synced).toEqual([5, 5]);
  });

  it('reads the record when the word names no edit count (a member from before counts were sent) or the copy has none', async () => {
    const { directory, seen } = directoryHolding(recordAt(7, ['mem://c']));
    const counted = copyHolding(recordAt(7, []), 0);
    await followRecord(directory, ID, counted.session, undefined);
    const uncounted = copyHolding(recordAt(undefined, []), 0);
    await followRecord(directory, ID, uncounted.session, 7);
    expect(seen.finds).toBe(2);
    expect(uncounted.applied).toEqual([['mem://c']]);
    // neither copy holds the stream: nobody waits on their word
    expect(seen.synced).toEqual([]);
  });

  it('keeps its newer copy when the record read is older, and says it follows the version it holds', async () => {
    const { directory, seen } = directoryHolding(recordAt(2, ['mem://old']));
    const { session, applied } = copyHolding(recordAt(4, ['mem://new']), 2);
    await followRecord(directory, ID, session, undefined);
    expect(applied).toEqual([]);
    expect(session.record?.subscriptions).toEqual(['mem://new']);
    expect(seen.synced).toEqual([4]);
  });
});
