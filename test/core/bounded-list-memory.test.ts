// A list call under its time budget (core/bounded-list.ts) holds nothing once it has answered,
// even when the provider read its signal, as the S3 and files sources do: a linked signal built with
// AbortSignal.any stays in a process-wide set while it has an abort listener, and with it the call's
// page — every page a source ever answered stayed in memory (481 MB after listing a 1M-object
// bucket). The caller's abort still reaches the provider and ends the wait at once.
import { getEventListeners } from 'node:events';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { listWithin } from '../../src/core/bounded-list.js';
import type { CallContext, Provider, ProviderPage } from '../../src/core/types.js';
import { ctx } from '../providers/helpers.js';
import { memoryProvider } from './fakes.js';

/** A full garbage collection, on demand. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** A source whose list reads its signal (as a network source hands it to its client) and answers a page. */
function signalReading(pages: WeakRef<ProviderPage>[]): Provider {
  const inner = memoryProvider({ root: 'mem://bounded/', names: ['a'] });
  return {
    ...inner,
    async list(_after, _limit, call: CallContext) {
      if (call.signal.aborted) throw new Error('aborted before it started');
      const page: ProviderPage = {
        items: Array.from({ length: 1000 }, (_, i) => ({
          uri: `mem://bounded/${i}`,
          name: `${i}`,
        })),
      };
      pages.push(new WeakRef(page));
      return page;
    },
  };
}

describe('listWithin', () => {
  it('keeps no page it answered, though the provider read its signal', async () => {
    const pages: WeakRef<ProviderPage>[] = [];
    const provider = signalReading(pages);
    // One caller signal for every call, as a long request or a server-wide signal would be.
    const caller = ctx();
    // In a function of its own, so no frame of this test still holds the last page.
    const listTwenty = async (): Promise<void> => {
      for (let i = 0; i < 20; i += 1) {
        const page = await listWithin(provider, undefined, 1000, caller, 60_000);
        expect(page.items).toHaveLength(1000);
      }
    };
    await listTwenty();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    const kept = pages.filter((ref) => ref.deref() !== undefined).length;
    expect(kept).toBe(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it("hands the caller's abort to the provider and answers with the caller's reason at once", async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const provider: Provider = {
      ...memoryProvider({ root: 'mem://bounded/', names: ['a'] }),
      list(_after, _limit, call) {
        seen = call.signal;
        return new Promise<never>(() => undefined); // never answers
      },
    };
    const call = listWithin(
      provider,
      undefined,
      10,
      { ...ctx(), signal: controller.signal },
      60_000,
    );
    const reason = new Error('the client went away');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBe(reason);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
