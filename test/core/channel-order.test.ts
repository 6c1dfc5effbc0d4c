/**
 * A route applies subscribe and unsubscribe in the order they were sent, even while a subscribe is
 * still being judged by the hub (its retain or authorization not yet answered): an unsubscribe
 * sent meanwhile undoes it, and a subscribe whose held URI was released meanwhile holds it again.
 */
import { describe, expect, it } from 'vitest';
import { Channel, type Hub } from '../../src/core/channel.js';

interface Gated<T> {
  promise: Promise<T>;
  open: (value: T) => void;
}

function gate<T>(): Gated<T> {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** A hub whose retains and authorizations wait for the test to answer them, counting releases. */
function heldHub() {
  const retains: Gated<void>[] = [];
  const authorizations: Gated<boolean>[] = [];
  let held = 0;
  const hub: Hub = {
    async retain(uri) {
      const answer = gate<void>();
      retains.push(answer);
      await answer.promise;
      held += 1;
      let released = false;
      return {
        uri,
        release: () => {
          if (released) throw new Error('released twice');
          released = true;
          held -= 1;
        },
      };
    },
    retainList: () => Promise.resolve(() => undefined),
    async authorized() {
      const answer = gate<boolean>();
      authorizations.push(answer);
      return answer.promise;
    },
    forget: () => undefined,
  };
  return { hub, retains, authorizations, held: () => held };
}

const delivery = { updated: () => undefined, listChanged: () => undefined };
const URI = 'file:///data/a.txt';

/** A channel holding URI once, and a second subscribe of it waiting on the hub's authorization. */
async function secondBeingAuthorized() {
  const hub = heldHub();
  const channel = new Channel(hub.hub, delivery, 10);
  const first = channel.add(URI);
  await asked(hub.retains, 1);
  hub.retains[0]!.open();
  await first;
  const second = channel.add(URI);
  await asked(hub.authorizations, 1);
  return { ...hub, channel, second };
}

/** Lets the channel's pending awaits run until the hub has been asked `count` times. */
async function asked(list: unknown[], count: number): Promise<void> {
  while (list.length < count) await new Promise((resolve) => setImmediate(resolve));
}

describe('Channel order of subscribe and unsubscribe', () => {
  it('an unsubscribe sent while the subscribe is being retained undoes it when it lands', async () => {
    const { hub, retains, held } = heldHub();
    const channel = new Channel(hub, delivery, 10);
    const subscribing = channel.add(URI);
    await asked(retains, 1);
    channel.remove(URI);
    retains[0]!.open();
    await expect(subscribing).resolves.toBe(URI);
    expect(channel.has(URI)).toBe(false);
    expect(held()).toBe(0);
    // The route is clean: a later subscribe holds it again.
    const again = channel.add(URI);
    await asked(retains, 2);
    retains[1]!.open();
    await again;
    expect(channel.has(URI)).toBe(true);
    expect(held()).toBe(1);
  });

  it('two subscribes in flight and one unsubscribe leave one subscriber', async () => {
    const { hub, retains, held } = heldHub();
    const channel = new Channel(hub, delivery, 10);
    const first = channel.add(URI);
    const second = channel.add(URI);
    await asked(retains, 2);
    channel.remove(URI);
    retains[0]!.open();
    retains[1]!.open();
    await Promise.all([first, second]);
    expect(channel.has(URI)).toBe(true);
    expect(held()).toBe(1);
    channel.remove(URI);
    expect(channel.has(URI)).toBe(false);
    expect(held()).toBe(0);
  });

  it('an unsubscribe of a subscribe that then fails undoes nothing later', async () => {
    const failing: Hub = {
      retain: () => Promise.reject(new Error('no such file')),
      retainList: () => Promise.resolve(() => undefined),
      authorized: () => Promise.resolve(true),
      forget: () => undefined,
    };
    const channel = new Channel(failing, delivery, 10);
    const subscribing = channel.add(URI);
    channel.remove(URI);
    await expect(subscribing).rejects.toThrow('no such file');
    const { hub, retains, held } = heldHub();
    const other = new Channel(hub, delivery, 10);
    const later = other.add(URI);
    await asked(retains, 1);
    retains[0]!.open();
    await later;
    expect(other.has(URI)).toBe(true);
    expect(held()).toBe(1);
  });

  it('a second subscribe whose held URI is released while it is authorized holds it again', async () => {
    const { retains, authorizations, held, channel, second } = await secondBeingAuthorized();
    channel.remove(URI);
    expect(held()).toBe(0);
    authorizations[0]!.open(true);
    // Not held any more: the second subscribe retains it anew (authorized again by the hub's retain).
    await asked(retains, 2);
    retains[1]!.open();
    await expect(second).resolves.toBe(URI);
    expect(channel.has(URI)).toBe(true);
    expect(held()).toBe(1);
  });

  it('an unsubscribe sent after a subscribe still being authorized removes both', async () => {
    const { retains, authorizations, held, channel, second } = await secondBeingAuthorized();
    channel.remove(URI);
    channel.remove(URI);
    authorizations[0]!.open(true);
    await expect(second).resolves.toBe(URI);
    expect(channel.has(URI)).toBe(false);
    expect(held()).toBe(0);
    expect(retains).toHaveLength(1);
  });

  it('closing while a subscribe is retained releases what it retained', async () => {
    const { hub, retains, held } = heldHub();
    const channel = new Channel(hub, delivery, 10);
    const subscribing = channel.add(URI);
    await asked(retains, 1);
    channel.close();
    retains[0]!.open();
    await expect(subscribing).rejects.toThrow('closing');
    expect(held()).toBe(0);
  });
});
