// Pins deadlines: a deadline aborts the work's own signal (seen by a fake provider) and rejects at
// once with the limit, a caller's abort cancels it too, and the timer and the listener on the
// caller's signal are gone on every path. Operations under one limit share one timer, and work
// that never reads its signal never gets an AbortController.
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Cancellation } from '../../src/core/cancellation.js';
import { ReservoirError } from '../../src/core/errors.js';
import { runWithDeadline, withDeadline } from '../../src/policy/deadline.js';

/** A provider call that runs until its signal aborts, recording what it saw. */
function abortableWork(): {
  seen: { aborted?: boolean; reason?: unknown };
  fn: (signal: AbortSignal) => Promise<string>;
} {
  const seen: { aborted?: boolean; reason?: unknown } = {};
  const fn = (signal: AbortSignal): Promise<string> =>
    new Promise<string>((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        seen.aborted = signal.aborted;
        seen.reason = signal.reason;
        reject(signal.reason);
      });
    });
  return { seen, fn };
}

async function rejection(promise: Promise<unknown>): Promise<ReservoirError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReservoirError);
  return error as ReservoirError;
}

describe('withDeadline', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts the work through its signal at the deadline and rejects with the limit', async () => {
    const parent = new AbortController();
    const work = abortableWork();
    const result = rejection(withDeadline(250, parent.signal, work.fn));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(249);
    expect(work.seen.aborted).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    const error = await result;
    expect(error.code).toBe('timeout');
    expect(error.data).toEqual({ limitMs: 250 });
    expect(error.message).toMatch(/timed out after 250 ms/);
    expect(work.seen).toEqual({ aborted: true, reason: error });
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('rejects at the deadline even when the work ignores its signal', async () => {
    let signal: AbortSignal | undefined;
    const result = rejection(
      withDeadline(100, undefined, (s) => {
        signal = s;
        return new Promise<never>(() => undefined);
      }),
    );
    await vi.advanceTimersByTimeAsync(100);
    expect((await result).data).toEqual({ limitMs: 100 });
    expect(signal?.aborted).toBe(true);
  });

  it('returns the result and clears its timer and listener when the work finishes in time', async () => {
    const parent = new AbortController();
    let inner: AbortSignal | undefined;
    const value = await withDeadline(1000, parent.signal, async (signal) => {
      inner = signal;
      return 'done';
    });
    expect(value).toBe('done');
    expect(inner?.aborted).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('passes the work’s own failure through and cleans up', async () => {
    const parent = new AbortController();
    await expect(
      withDeadline(1000, parent.signal, async () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    await expect(
      withDeadline(1000, parent.signal, () => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('aborts the work when the caller aborts first, and cleans up', async () => {
    const parent = new AbortController();
    const work = abortableWork();
    const result = rejection(withDeadline(1000, parent.signal, work.fn));
    parent.abort(new Error('client went away'));
    const error = await result;
    expect(error.code).toBe('timeout');
    expect(error.data).toEqual({ limitMs: 1000, cancelled: true });
    expect((error.cause as Error).message).toBe('client went away');
    expect(work.seen.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never starts the work when the caller already aborted', async () => {
    const fn = vi.fn(async () => 'never');
    const error = await rejection(withDeadline(1000, AbortSignal.abort(), fn));
    expect(error.data.cancelled).toBe(true);
    expect(fn).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('listens to a Cancellation without making its signal, and stops listening on every path', async () => {
    const made = vi.spyOn(Cancellation.prototype, 'signal', 'get');
    const done = new Cancellation();
    expect(await runWithDeadline(1000, done, async () => 'done')).toBe('done');
    await expect(
      withDeadline(1000, done, async () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    expect(done.listenerCount).toBe(0);
    const timedOut = new Cancellation();
    const late = rejection(withDeadline(100, timedOut, () => new Promise<never>(() => undefined)));
    expect(timedOut.listenerCount).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect((await late).data).toEqual({ limitMs: 100 });
    expect(timedOut.listenerCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(made).not.toHaveBeenCalled();
    made.mockRestore();
  });

  it('aborts the work when a Cancellation is cancelled first, and never starts it when already cancelled', async () => {
    const cancel = new Cancellation();
    const work = abortableWork();
    const result = rejection(withDeadline(1000, cancel, work.fn));
    cancel.abort(new Error('client went away'));
    const error = await result;
    expect(error.data).toEqual({ limitMs: 1000, cancelled: true });
    expect((error.cause as Error).message).toBe('client went away');
    expect(work.seen.aborted).toBe(true);
    expect(cancel.listenerCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    const fn = vi.fn(async () => 'never');
    expect((await rejection(withDeadline(1000, cancel, fn))).data.cancelled).toBe(true);
    expect(fn).not.toHaveBeenCalled();
  });

  it('refuses a deadline that is not a positive number', async () => {
    await expect(withDeadline(0, undefined, async () => 1)).rejects.toThrow(RangeError);
  });

  it('runs many operations under one limit on one timer, expiring each at its own deadline', async () => {
    const outcomes: string[] = [];
    const hang = (): Promise<never> => new Promise<never>(() => undefined);
    const first = withDeadline(300, undefined, hang).catch((e: ReservoirError) =>
      outcomes.push(`first:${e.code}`),
    );
    await vi.advanceTimersByTimeAsync(100);
    const second = withDeadline(300, undefined, hang).catch((e: ReservoirError) =>
      outcomes.push(`second:${e.code}`),
    );
    const quick = withDeadline(300, undefined, async () => 'quick');
    expect(vi.getTimerCount()).toBe(1);
    expect(await quick).toBe('quick');
    await vi.advanceTimersByTimeAsync(200);
    await first;
    expect(outcomes).toEqual(['first:timeout']);
    expect(vi.getTimerCount()).toBe(1); // re-armed for the second
    await vi.advanceTimersByTimeAsync(99);
    expect(outcomes).toEqual(['first:timeout']);
    await vi.advanceTimersByTimeAsync(1);
    await second;
    expect(outcomes).toEqual(['first:timeout', 'second:timeout']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives a signal only to work that asks for it, already aborted if asked after the deadline', async () => {
    const Original = globalThis.AbortController;
    let created = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        created += 1;
      }
    };
    try {
      expect(await runWithDeadline(1000, undefined, async () => 'no signal needed')).toBe(
        'no signal needed',
      );
      expect(created).toBe(0);
      let late: { signal: AbortSignal } | undefined;
      const result = rejection(
        runWithDeadline(50, undefined, (lease) => {
          late = lease;
          return new Promise<never>(() => undefined);
        }),
      );
      await vi.advanceTimersByTimeAsync(50);
      const error = await result;
      expect(created).toBe(0);
      expect(late?.signal.aborted).toBe(true);
      expect(late?.signal.reason).toBe(error);
      expect(created).toBe(1);
    } finally {
      globalThis.AbortController = Original;
    }
  });
});
