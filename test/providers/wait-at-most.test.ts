// Pins the hint budget of a list page (utils/wait-at-most.ts): the page waits for its content
// hints until they are ready or the budget passes, whichever is first, and a failed hint never
// fails the page.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitAtMost } from '../../src/providers/utils/wait-at-most.js';

describe('waitAtMost', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('returns as soon as the work is done, before the budget passes', async () => {
    vi.useFakeTimers({ now: 0 });
    await waitAtMost(Promise.resolve('ready'), 50);
    expect(Date.now()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('returns when the budget passes while the work is still running', async () => {
    vi.useFakeTimers({ now: 0 });
    let settled = false;
    const waiting = waitAtMost(new Promise(() => undefined), 50).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(49);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(Date.now()).toBe(50);
  });

  it('resolves, never rejects, when the work fails', async () => {
    vi.useFakeTimers({ now: 0 });
    await expect(waitAtMost(Promise.reject(new Error('gone')), 50)).resolves.toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
  });
});
