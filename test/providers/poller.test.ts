import { afterEach, describe, expect, it, vi } from 'vitest';
import { definedProps } from '../../src/core/defined.js';
import { Poller } from '../../src/providers/utils/poller.js';

/** A poller whose every check takes `checkMs` (of fake time); returns the start time of each check. */
function polling(options: { fromStart?: boolean; checkMs: number; fail?: boolean }): {
  starts: number[];
  poller: Poller;
} {
  const starts: number[] = [];
  const poller = new Poller({
    intervalMs: 250,
    maxBackoff: 4,
    ...definedProps({ fromStart: options.fromStart }),
    check: async () => {
      starts.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, options.checkMs));
      if (options.fail === true) throw new Error('down');
    },
  });
  return { starts, poller };
}

describe('Poller', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts the interval from the end of a check by default', async () => {
    vi.useFakeTimers({ now: 0 });
    const { starts, poller } = polling({ checkMs: 100 });
    await vi.advanceTimersByTimeAsync(1100);
    poller.stop();
    expect(starts).toEqual([250, 600, 950]);
  });

  it('with fromStart, a slow check does not push the next one back, and checks never overlap', async () => {
    vi.useFakeTimers({ now: 0 });
    const { starts, poller } = polling({ fromStart: true, checkMs: 100 });
    await vi.advanceTimersByTimeAsync(1100);
    poller.stop();
    expect(starts).toEqual([250, 500, 750, 1000]);
    const slow = polling({ fromStart: true, checkMs: 400 });
    await vi.advanceTimersByTimeAsync(1100);
    slow.poller.stop();
    // each starts as soon as the last ended (a timer of 0 ms fires after 1 ms), not 250 ms later
    expect(slow.starts).toHaveLength(3);
    expect(slow.starts[0]).toBe(1350);
    for (let i = 1; i < slow.starts.length; i += 1)
      expect(slow.starts[i]! - slow.starts[i - 1]!).toBeGreaterThanOrEqual(400);
    for (let i = 1; i < slow.starts.length; i += 1)
      expect(slow.starts[i]! - slow.starts[i - 1]!).toBeLessThanOrEqual(401);
  });

  it('with fromStart, a failing check still backs off by the doubled interval', async () => {
    vi.useFakeTimers({ now: 0 });
    const { starts, poller } = polling({ fromStart: true, checkMs: 100, fail: true });
    await vi.advanceTimersByTimeAsync(3000);
    poller.stop();
    // 250; fails at 350, waits 500 → 850; fails at 950, waits 1000 → 1950; fails at 2050, waits 1000 (4×) → 3050
    expect(starts).toEqual([250, 850, 1950]);
  });
});
