// Pins the idle memory reducer (src/server/idle-memory.ts): it gives memory back once, after a
// busy period ends and the server has been quiet for its quiet period — never with an operation in
// flight, not again on an idle server, not after work that left the heap small — and not at all
// when switched off (`memoryReducer: false`). Time is the fake host's: ticks run when the test says.
import { describe, expect, it } from 'vitest';
import {
  IdleMemoryReducer,
  MIN_GROWTH_BYTES,
  type IdleMemoryHost,
} from '../../src/server/idle-memory.js';
import { PolicyContext, type Policy } from '../../src/policy/index.js';
import { LOCAL_PRINCIPAL } from '../../src/core/principal.js';
import { createReservoir } from '../../src/server/index.js';
import { composeServer } from '../../src/server/compose.js';
import { loadConfig } from '../../src/config/load.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MB = 1024 * 1024;

/** A host whose timers run when `tick()` is called and whose heap is a number the test sets. */
class FakeHost implements IdleMemoryHost {
  held = 50 * MB;
  releases = 0;
  /** What was in flight when each release ran. */
  inFlightAtRelease: number[] = [];
  pending: { ms: number; run: () => void } | undefined;
  inFlight = 0;
  bounds = 0;

  heldBytes(): number {
    return this.held;
  }
  bound(): void {
    this.bounds += 1;
  }
  release(): void {
    this.releases += 1;
    this.inFlightAtRelease.push(this.inFlight);
    this.held = 50 * MB;
  }
  after(ms: number, run: () => void): unknown {
    if (this.pending !== undefined) throw new Error('two timers armed at once');
    this.pending = { ms, run };
    return this.pending;
  }
  cancel(handle: unknown): void {
    if (this.pending === handle) this.pending = undefined;
  }
  /** Runs the armed timer, if any; returns whether one was armed. */
  tick(): boolean {
    const pending = this.pending;
    this.pending = undefined;
    pending?.run();
    return pending !== undefined;
  }
  /** Ticks until no timer is armed (at most `limit`); returns how many ran. */
  settle(limit = 20): number {
    let ticks = 0;
    while (ticks < limit && this.tick()) ticks += 1;
    return ticks;
  }
}

const passThrough: Policy = (ctx, handler) => handler(ctx);

function context(): PolicyContext {
  return new PolicyContext({
    principal: LOCAL_PRINCIPAL,
    method: 'resources/list',
    target: undefined,
    signal: new AbortController().signal,
  });
}

function setup(quietMs = 6000) {
  const host = new FakeHost();
  const reducer = new IdleMemoryReducer(host, { quietMs });
  const policy = reducer.around(passThrough);
  /** One operation that grows the heap by `grow` bytes while it runs. */
  const operation = (grow = 0) =>
    policy(context(), async () => {
      host.inFlight += 1;
      host.held += grow;
      await Promise.resolve();
      host.inFlight -= 1;
    });
  return { host, reducer, policy, operation };
}

describe('IdleMemoryReducer', () => {
  it("bounds the heap's growth once, as it starts, before any work", () => {
    const { host } = setup(6000);
    expect(host.bounds).toBe(1);
    expect(host.releases).toBe(0);
  });

  it('gives memory back once, after the server has been quiet for three ticks of quietMs / 3', async () => {
    const { host, reducer, operation } = setup(6000);
    for (let page = 0; page < 100; page += 1) await operation(MB);
    expect(host.pending?.ms).toBe(2000);
    // The timer was armed after the first page: its first tick saw the other 99 begin.
    expect(host.tick()).toBe(true);
    expect(host.tick()).toBe(true);
    expect(host.tick()).toBe(true);
    expect(host.releases).toBe(0);
    expect(host.tick()).toBe(true);
    expect(host.releases).toBe(1);
    expect(reducer.reductions).toBe(1);
    // Nothing is armed any more: an idle server runs no timer and collects nothing again.
    expect(host.pending).toBeUndefined();
    expect(host.settle()).toBe(0);
    expect(host.releases).toBe(1);
  });

  it('never releases while an operation is in flight, and waits a full quiet period after it ends', async () => {
    const { host, policy, operation } = setup();
    await operation(100 * MB);
    let finish!: () => void;
    const long = policy(context(), () => {
      host.inFlight += 1;
      return new Promise<void>((resolve) => {
        finish = () => {
          host.inFlight -= 1;
          resolve();
        };
      });
    });
    // The armed ticks pass while the long operation runs: none releases, and none re-arms.
    expect(host.settle()).toBeGreaterThan(0);
    expect(host.releases).toBe(0);
    expect(host.pending).toBeUndefined();
    finish();
    await long;
    expect(host.tick()).toBe(true);
    expect(host.tick()).toBe(true);
    expect(host.releases).toBe(0);
    expect(host.tick()).toBe(true);
    expect(host.releases).toBe(1);
    expect(host.inFlightAtRelease).toEqual([0]);
  });

  it('starts the quiet count again when an operation begins and ends between two ticks', async () => {
    const { host, operation } = setup();
    await operation(100 * MB);
    host.tick();
    host.tick();
    await operation(); // just before the third tick: not quiet yet
    host.tick();
    expect(host.releases).toBe(0);
    expect(host.settle()).toBe(3);
    expect(host.releases).toBe(1);
  });

  it('does not collect after work that left the heap grown by less than the threshold', async () => {
    const { host, operation } = setup();
    await operation(MIN_GROWTH_BYTES - 1);
    expect(host.settle()).toBe(3);
    expect(host.releases).toBe(0);
    // The next burst is judged from the same mark: together they cross it.
    await operation(1);
    host.settle();
    expect(host.releases).toBe(1);
  });

  it('judges the next burst from what the last release left', async () => {
    const { host, operation } = setup();
    await operation(100 * MB);
    host.settle();
    expect(host.releases).toBe(1);
    await operation(MB); // a small read after the release: no second collection
    host.settle();
    expect(host.releases).toBe(1);
    await operation(40 * MB); // a second burst
    host.settle();
    expect(host.releases).toBe(2);
  });

  it('runs nothing after close()', async () => {
    const { host, reducer, operation } = setup();
    await operation(100 * MB);
    expect(host.pending).toBeDefined();
    reducer.close();
    expect(host.pending).toBeUndefined();
    await operation(100 * MB);
    expect(host.settle()).toBe(0);
    expect(host.releases).toBe(0);
  });

  it('refuses a quiet period that is not a positive number of ms', () => {
    expect(() => new IdleMemoryReducer(new FakeHost(), { quietMs: 0 })).toThrow(/quietMs/);
    expect(() => new IdleMemoryReducer(new FakeHost(), { quietMs: Number.NaN })).toThrow(/quietMs/);
  });
});

describe('Reservoir memoryReducer option', () => {
  it('runs only when asked: an embedder gets none unless it sets memoryReducer', async () => {
    const on = createReservoir({ memoryReducer: true });
    const tuned = createReservoir({ memoryReducer: { quietMs: 10_000 } });
    const unset = createReservoir({});
    const off = createReservoir({ memoryReducer: false });
    const reducerOf = (r: object) => (r as { memoryReducer?: IdleMemoryReducer }).memoryReducer;
    expect(reducerOf(on)).toBeInstanceOf(IdleMemoryReducer);
    expect(reducerOf(tuned)).toBeInstanceOf(IdleMemoryReducer);
    expect(reducerOf(unset)).toBeUndefined();
    expect(reducerOf(off)).toBeUndefined();
    await Promise.all([on.close(), tuned.close(), unset.close(), off.close()]);
  });
});

describe('reservoir serve and server.memoryReducer', () => {
  /** The reducer of the server `reservoir serve` composes from a config whose server section is `server`. */
  async function servedReducer(server: string): Promise<IdleMemoryReducer | undefined> {
    const dir = makeTempDir('reservoir-reducer-');
    const signals = ['SIGINT', 'SIGTERM'] as const;
    const before = signals.map((signal) => process.listeners(signal));
    try {
      mkdirSync(join(dir, 'docs'));
      const file = join(dir, 'reservoir.yaml');
      writeFileSync(file, `sources:\n  - { type: files, root: docs }\n${server}`);
      const composed = await composeServer({
        config: loadConfig(file, { env: {} }),
        commandLine: { roots: [], source: {}, stateDir: join(dir, 'state') },
        logFormat: 'json',
        tools: false,
        search: false,
      });
      const reducer = (composed.reservoir as unknown as { memoryReducer?: IdleMemoryReducer })
        .memoryReducer;
      await composed.reservoir.close();
      return reducer;
    } finally {
      // the composed server's drain on SIGINT/SIGTERM is the serving process's, not this worker's
      signals.forEach((signal, i) => {
        for (const listener of process.listeners(signal))
          if (!before[i]!.includes(listener)) process.removeListener(signal, listener);
      });
      removeTree(dir);
    }
  }

  it('runs the reducer by default, with the quiet period the config sets, and none when turned off', async () => {
    const byDefault = await servedReducer('');
    expect(byDefault).toBeInstanceOf(IdleMemoryReducer);
    const tuned = await servedReducer('server:\n  memoryReducer: { quietMs: 9000 }\n');
    expect((tuned as unknown as { tickMs: number }).tickMs).toBe(3000);
    expect(await servedReducer('server:\n  memoryReducer: true\n')).toBeInstanceOf(
      IdleMemoryReducer,
    );
    expect(await servedReducer('server:\n  memoryReducer: false\n')).toBeUndefined();
  });
});
