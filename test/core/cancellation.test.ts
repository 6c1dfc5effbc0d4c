// A caller's cancellation without an AbortSignal until one is asked for: it behaves as an
// AbortController would (the same reason, an AbortError when none is given, once only), a signal
// made after the abort is already aborted, and onAbort listeners run once and can be removed.
import { describe, expect, it, vi } from 'vitest';
import { Cancellation, signalOf } from '../../src/core/cancellation.js';

describe('Cancellation', () => {
  it('makes no signal until asked, and the one it makes follows later aborts', () => {
    const cancel = new Cancellation();
    expect(cancel.aborted).toBe(false);
    const signal = cancel.signal;
    expect(cancel.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    const seen = vi.fn();
    signal.addEventListener('abort', seen);
    cancel.abort('user gave up');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('user gave up');
    expect(seen).toHaveBeenCalledTimes(1);
  });

  it('gives a signal asked for after the abort already aborted, with the same reason', () => {
    const cancel = new Cancellation();
    const reason = new Error('client went away');
    cancel.abort(reason);
    expect(cancel.aborted).toBe(true);
    expect(cancel.reason).toBe(reason);
    expect(signalOf(cancel).aborted).toBe(true);
    expect(signalOf(cancel).reason).toBe(reason);
  });

  it('aborts with an AbortError when no reason is given, as AbortController does', () => {
    const cancel = new Cancellation();
    cancel.abort();
    const expected = (() => {
      const controller = new AbortController();
      controller.abort();
      return controller.signal.reason as DOMException;
    })();
    expect(cancel.reason).toBeInstanceOf(DOMException);
    expect((cancel.reason as DOMException).name).toBe(expected.name);
    expect(cancel.signal.reason).toBe(cancel.reason);
  });

  it('runs each onAbort listener once, keeps the first reason, and forgets removed listeners', () => {
    const cancel = new Cancellation();
    const kept = vi.fn();
    const removed = vi.fn();
    cancel.onAbort(kept);
    const off = cancel.onAbort(removed);
    expect(cancel.listenerCount).toBe(2);
    off();
    off();
    expect(cancel.listenerCount).toBe(1);
    cancel.abort('first');
    cancel.abort('second');
    expect(kept).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    expect(cancel.reason).toBe('first');
    expect(cancel.listenerCount).toBe(0);
  });

  it('passes a plain AbortSignal through signalOf unchanged', () => {
    const signal = new AbortController().signal;
    expect(signalOf(signal)).toBe(signal);
  });
});
