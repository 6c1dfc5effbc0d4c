// Pins reading a bucket listing ahead (src/providers/s3/read-ahead.ts): the page after one a
// client paging through was given is asked for at once and handed over once; a client asking for
// the first page alone costs the store nothing more; a page read ahead that failed, was dropped or
// is for another page size leaves the caller to ask the store itself; an abort while waiting for
// one rejects at once. The store is a fake ListObjectsV2 whose answers the test settles.
import type { ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ListParams } from '../../src/providers/s3/listing.js';
import { ListReadAhead } from '../../src/providers/s3/read-ahead.js';

interface Asked {
  params: ListParams;
  signal: AbortSignal | undefined;
  settle: (page: ListObjectsV2CommandOutput) => void;
  fail: (error: Error) => void;
}

/** A ListObjectsV2 whose every request waits until the test settles it. */
function fakeStore(): { asked: Asked[]; listPage: ConstructorParameters<typeof ListReadAhead>[0] } {
  const asked: Asked[] = [];
  const listPage = (params: ListParams, _uri: string, signal?: AbortSignal) =>
    new Promise<ListObjectsV2CommandOutput>((settle, fail) =>
      asked.push({ params, signal, settle, fail }),
    );
  return { asked, listPage };
}

const page = (...keys: string[]): ListObjectsV2CommandOutput =>
  ({ Contents: keys.map((Key) => ({ Key })), IsTruncated: true }) as ListObjectsV2CommandOutput;

const PARAMS = { prefix: 'k/', maxKeys: 2 };

afterEach(() => {
  vi.useRealTimers();
});

describe('ListReadAhead', () => {
  it('reads the next page once a client is past its first page, and hands it over once', async () => {
    const { asked, listPage } = fakeStore();
    const ahead = new ListReadAhead(listPage);
    // the first page answered: a client that wanted it alone costs the store nothing more
    ahead.answered(undefined, 'k/2', 'token-2', PARAMS, 's3://b/');
    expect(asked).toHaveLength(0);
    // the second page answered: the third is asked for at once, resumed by its token
    ahead.answered('k/2', 'k/4', 'token-4', PARAMS, 's3://b/');
    expect(asked.map((a) => a.params)).toEqual([
      { prefix: 'k/', maxKeys: 2, after: 'k/4', token: 'token-4' },
    ]);
    asked[0]!.settle(page('k/5', 'k/6'));
    const third = await ahead.take('k/4', 2);
    expect(third?.Contents?.map((o) => o.Key)).toEqual(['k/5', 'k/6']);
    expect(await ahead.take('k/4', 2)).toBeUndefined();
    expect(ahead.size).toBe(0);
  });

  it('leaves a page of another size, or after another key, to the store', async () => {
    const { asked, listPage } = fakeStore();
    const ahead = new ListReadAhead(listPage);
    ahead.answered('k/2', 'k/4', 'token-4', PARAMS, 's3://b/');
    expect(await ahead.take('k/4', 3)).toBeUndefined();
    expect(await ahead.take('k/3', 2)).toBeUndefined();
    expect(asked[0]!.signal?.aborted).toBe(false);
    expect(ahead.size).toBe(1);
  });

  it('leaves the page to the store when reading it ahead failed', async () => {
    const { asked, listPage } = fakeStore();
    const ahead = new ListReadAhead(listPage);
    ahead.answered('k/2', 'k/4', 'token-4', PARAMS, 's3://b/');
    asked[0]!.fail(new Error('store unavailable'));
    expect(await ahead.take('k/4', 2)).toBeUndefined();
  });

  it('rejects at once, and aborts the request, when the caller aborts while it waits', async () => {
    const { asked, listPage } = fakeStore();
    const ahead = new ListReadAhead(listPage);
    ahead.answered('k/2', 'k/4', 'token-4', PARAMS, 's3://b/');
    const call = new AbortController();
    const taking = ahead.take('k/4', 2, call.signal);
    call.abort(new Error('client cancelled'));
    await expect(taking).rejects.toThrow('client cancelled');
    expect(asked[0]!.signal?.aborted).toBe(true);
  });

  it('keeps at most its bound of pages waiting, dropping the oldest and aborting its request', async () => {
    const { asked, listPage } = fakeStore();
    const ahead = new ListReadAhead(listPage, 5000, 2);
    ahead.answered('a/2', 'a/4', 't-a', PARAMS, 's3://b/');
    ahead.answered('b/2', 'b/4', 't-b', PARAMS, 's3://b/');
    ahead.answered('c/2', 'c/4', 't-c', PARAMS, 's3://b/');
    expect(asked.map((a) => a.signal?.aborted)).toEqual([true, false, false]);
    expect(ahead.size).toBe(2);
    expect(await ahead.take('a/4', 2)).toBeUndefined();
  });

  it('drops a page nobody asked for within its time, aborting its request', async () => {
    vi.useFakeTimers();
    const { asked, listPage } = fakeStore();
    const ahead = new ListReadAhead(listPage, 5000);
    ahead.answered('k/2', 'k/4', 'token-4', PARAMS, 's3://b/');
    vi.advanceTimersByTime(4999);
    expect(ahead.size).toBe(1);
    vi.advanceTimersByTime(1);
    expect(ahead.size).toBe(0);
    expect(asked[0]!.signal?.aborted).toBe(true);
    expect(await ahead.take('k/4', 2)).toBeUndefined();
  });

  it('aborts every page waiting when closed', () => {
    const { asked, listPage } = fakeStore();
    const ahead = new ListReadAhead(listPage);
    ahead.answered('a/2', 'a/4', 't-a', PARAMS, 's3://b/');
    ahead.answered('b/2', 'b/4', 't-b', PARAMS, 's3://b/');
    ahead.close();
    expect(asked.every((a) => a.signal?.aborted === true)).toBe(true);
    expect(ahead.size).toBe(0);
  });
});
