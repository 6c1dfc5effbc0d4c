// Pins the registry's rule for a failing source (docs/design.md, "One failing source"): a mount whose
// list throws or runs past its time budget is skipped for that page and named in `skipped` (root and
// kind, never the error text); the other mounts are listed exactly once, in mount order, across every
// page size; the outage is logged once and the recovery once; a source that recovers mid-traversal is
// not revisited by cursors already past it but is back on the next traversal; a caller's own abort is
// not a source failure; and the readiness probe both reports an outage and notices a recovery.
import { describe, expect, it, vi } from 'vitest';
import { UnavailableError, type ReservoirError } from '../../src/core/errors.js';
import type { Logger } from '../../src/core/log.js';
import { Registry, type ListPage } from '../../src/core/registry.js';
import {
  probeSource,
  redactCredentials,
  type SkippedSource,
} from '../../src/core/source-health.js';
import type { CallContext, Provider, ProviderPage, ResourceInfo } from '../../src/core/types.js';
import { ctx, rejection } from '../providers/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { memoryProvider } from './fakes.js';

interface Switchable extends Provider {
  /** What list does now: answer, throw, or hang until its signal aborts. */
  mode: 'up' | 'down' | 'hang' | 'crash';
  /** Signals the hanging calls saw aborted. */
  readonly aborted: unknown[];
  /** List calls made, and the most ever in flight at once. */
  readonly calls: { total: number; inFlight: number; maxInFlight: number };
}

/** A memory provider whose list can be made to fail, crash or hang. */
function switchable(root: string, names: string[]): Switchable {
  const inner = memoryProvider({ root, names });
  const aborted: unknown[] = [];
  const calls = { total: 0, inFlight: 0, maxInFlight: 0 };
  const provider: Switchable = {
    name: 'switchable',
    root,
    mode: 'up',
    aborted,
    calls,
    read: (uri, call) => inner.read(uri, call),
    isValidKey: (key) => inner.isValidKey!(key),
    async list(after, limit, call: CallContext) {
      calls.total += 1;
      calls.inFlight += 1;
      calls.maxInFlight = Math.max(calls.maxInFlight, calls.inFlight);
      try {
        return await answer(after, limit, call);
      } finally {
        calls.inFlight -= 1;
      }
    },
  };
  const answer = async (
    after: string | undefined,
    limit: number,
    call: CallContext,
  ): Promise<ProviderPage> => {
    if (provider.mode === 'down')
      throw new UnavailableError(
        root,
        'the database at postgres://app:hunter2@db.internal/app cannot answer',
      );
    if (provider.mode === 'crash') throw new TypeError('a bug in the provider');
    if (provider.mode === 'hang') {
      return new Promise((_, reject) =>
        call.signal.addEventListener('abort', () => {
          aborted.push(call.signal.reason);
          reject(call.signal.reason as Error);
        }),
      );
    }
    return inner.list(after, limit, call);
  };
  return provider;
}

/** A logger that keeps every line. */
function recordingLogger(): Logger & {
  lines: { level: string; fields: Record<string, unknown>; message?: string }[];
} {
  const lines: { level: string; fields: Record<string, unknown>; message?: string }[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown> | string, message?: string): void => {
      lines.push(
        typeof fields === 'string'
          ? { level, fields: {}, message: fields }
          : { level, fields, ...(message === undefined ? {} : { message }) },
      );
    };
  return { lines, error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

async function traverse(
  registry: Registry,
  limit: number,
  call: CallContext = ctx(),
): Promise<{ uris: string[]; skipped: SkippedSource[]; pages: number }> {
  const uris: string[] = [];
  const skipped: SkippedSource[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages < 10_000; pages += 1) {
    const page: ListPage<ResourceInfo> = await registry.listResources(cursor, call, { limit });
    uris.push(...page.items.map((i) => i.uri));
    skipped.push(...(page.skipped ?? []));
    if (page.nextCursor === undefined) return { uris, skipped, pages };
    cursor = page.nextCursor;
  }
  throw new Error('listing never ended');
}

const names = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}${i}`);
const uris = (root: string, list: string[]): string[] => list.map((n) => `${root}${n}`);

/** Resolves once `check` holds (a probe's outcome is asynchronous). */
const until = (check: () => boolean, what: string): Promise<unknown> =>
  eventually(check, what, { stepMs: 5 });

function threeSources(logger?: Logger, sourceListTimeoutMs?: number) {
  const a = switchable('mem://a/', names('a', 5));
  const b = switchable('mem://b/', names('b', 5));
  const c = switchable('mem://c/', names('c', 5));
  const registry = new Registry({
    sourceProbeIntervalMs: 10,
    ...(logger === undefined ? {} : { logger }),
    ...(sourceListTimeoutMs === undefined ? {} : { sourceListTimeoutMs }),
  });
  registry.mount(a).mount(b).mount(c);
  return {
    a,
    b,
    c,
    registry,
    others: [...uris('mem://a/', names('a', 5)), ...uris('mem://c/', names('c', 5))],
  };
}

describe('a failing source in a merged list', () => {
  it.each([1, 2, 3, 7, 1000])(
    'lists every other source exactly once, in order, and names the failing one, at page size %i',
    async (limit) => {
      const { b, registry, others } = threeSources();
      b.mode = 'down';
      const { uris: listed, skipped } = await traverse(registry, limit);
      expect(listed).toEqual(others);
      expect(skipped).toEqual([{ source: 'mem://b/', reason: 'unavailable' }]);
    },
  );

  it('names a provider that throws an unexpected error as failed, without its message', async () => {
    const { b, registry, others } = threeSources();
    b.mode = 'crash';
    const page = await registry.listResources(undefined, ctx(), { limit: 100 });
    expect(page.items.map((i) => i.uri)).toEqual(others);
    expect(page.skipped).toEqual([{ source: 'mem://b/', reason: 'error' }]);
    expect(JSON.stringify(page)).not.toContain('a bug');
  });

  it('skips a source that runs past its time budget, aborting its work, and answers the page', async () => {
    const { b, registry, others } = threeSources(undefined, 100);
    b.mode = 'hang';
    const started = Date.now();
    const page = await registry.listResources(undefined, ctx(), { limit: 100 });
    const elapsed = Date.now() - started;
    // b hangs for ever: an answer at all, with b skipped for 'timeout', is the budget firing.
    expect(page.items.map((i) => i.uri)).toEqual(others);
    expect(page.skipped).toEqual([{ source: 'mem://b/', reason: 'timeout' }]);
    expect(b.aborted).toHaveLength(1);
    expect((b.aborted[0] as ReservoirError).code).toBe('timeout');
    expect(elapsed).toBeGreaterThanOrEqual(90); // not before the budget
  });

  it('ends the page early, without calling it failed, when a source that answered runs out of budget over many short calls', async () => {
    // On a fake clock, each call of the slow source takes 30 ms: the fourth runs past the 100 ms budget.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const slow = memoryProvider({ root: 'mem://slow/', names: names('s', 8), maxPage: 1 });
      const slowProvider: Provider = {
        ...slow,
        list: async (after, limit, call) => {
          vi.advanceTimersByTime(30);
          return slow.list(after, limit, call);
        },
      };
      const registry = new Registry({ sourceListTimeoutMs: 100 });
      registry.mount(slowProvider).mount(memoryProvider({ root: 'mem://z/', names: ['z0'] }));
      const first = await registry.listResources(undefined, ctx(), { limit: 100 });
      expect(first.items.map((i) => i.uri)).toEqual(uris('mem://slow/', names('s', 3)));
      expect(first.skipped).toBeUndefined();
      expect(first.nextCursor).toBeDefined();
      const all = await traverse(registry, 100);
      expect(all.skipped).toEqual([]);
      expect(all.uris).toEqual([...uris('mem://slow/', names('s', 8)), 'mem://z/z0']);
      expect(registry.health.outage('mem://slow/')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('continues after a failure mid-source: the rest of that source is absent from this traversal, nothing else repeats or goes missing', async () => {
    const { b, registry } = threeSources();
    const first = await registry.listResources(undefined, ctx(), { limit: 7 });
    expect(first.items.map((i) => i.uri)).toEqual([
      ...uris('mem://a/', names('a', 5)),
      'mem://b/b0',
      'mem://b/b1',
    ]);
    b.mode = 'down';
    const second = await registry.listResources(first.nextCursor, ctx(), { limit: 7 });
    expect(second.items.map((i) => i.uri)).toEqual(uris('mem://c/', names('c', 5)));
    expect(second.skipped).toEqual([{ source: 'mem://b/', reason: 'unavailable' }]);
    expect(second.nextCursor).toBeUndefined();
  });

  it('does not revisit a source that recovers after the traversal passed it, and lists it in full on the next traversal', async () => {
    const { b, registry, others } = threeSources();
    b.mode = 'down';
    const first = await registry.listResources(undefined, ctx(), { limit: 6 });
    expect(first.skipped).toEqual([{ source: 'mem://b/', reason: 'unavailable' }]);
    b.mode = 'up';
    const rest = [];
    let cursor = first.nextCursor;
    while (cursor !== undefined) {
      const page = await registry.listResources(cursor, ctx(), { limit: 6 });
      expect(page.skipped).toBeUndefined();
      rest.push(...page.items.map((i) => i.uri));
      cursor = page.nextCursor;
    }
    expect([...first.items.map((i) => i.uri), ...rest]).toEqual(others);
    await until(
      () => registry.health.outage('mem://b/') === undefined,
      'the probe to see the source back',
    );
    const again = await traverse(registry, 6);
    expect(again.skipped).toEqual([]);
    expect(again.uris).toEqual([
      ...uris('mem://a/', names('a', 5)),
      ...uris('mem://b/', names('b', 5)),
      ...uris('mem://c/', names('c', 5)),
    ]);
  });

  it('logs an outage once however many pages skip the source, the recovery once, and a new outage again', async () => {
    const logger = recordingLogger();
    const { b, registry } = threeSources(logger);
    b.mode = 'down';
    for (let i = 0; i < 5; i += 1) await traverse(registry, 3);
    b.mode = 'up';
    await until(
      () => registry.health.outage('mem://b/') === undefined,
      'the probe to see the source back',
    );
    for (let i = 0; i < 3; i += 1) expect((await traverse(registry, 3)).skipped).toEqual([]);
    b.mode = 'down';
    await traverse(registry, 3);
    expect(logger.lines.map((l) => [l.level, l.message, l.fields['source']])).toEqual([
      ['warn', 'source failed; lists skip it until it answers again', 'mem://b/'],
      ['info', 'source answers again; lists include it', 'mem://b/'],
      ['warn', 'source failed; lists skip it until it answers again', 'mem://b/'],
    ]);
    expect(String(logger.lines[0]!.fields['err'])).toContain('postgres://***@db.internal/app');
    expect(String(logger.lines[0]!.fields['err'])).not.toContain('hunter2');
  });

  it('skips a source known to be down at once, without calling it, while one probe at a time tries it in the background', async () => {
    const { b, registry, others } = threeSources(undefined, 500);
    b.mode = 'hang';
    await registry.listResources(undefined, ctx(), { limit: 100 }); // finds it down: costs the budget once
    const before = b.calls.total;
    for (let i = 0; i < 20; i += 1) {
      const page = await registry.listResources(undefined, ctx(), { limit: 100 });
      expect(page.items.map((item) => item.uri)).toEqual(others);
      expect(page.skipped).toEqual([{ source: 'mem://b/', reason: 'timeout' }]);
    }
    // Twenty pages, fewer than twenty calls to b: the pages did not call it (only the background
    // probe did, one at a time, each hanging for its 500 ms budget).
    expect(b.calls.total - before).toBeLessThan(20);
    await until(() => b.calls.total >= 3, 'two background probes');
    expect(b.calls.maxInFlight).toBe(1);
    await registry.close();
  });

  it('brings a recovered source back by itself, with no list traffic, and logs the recovery once', async () => {
    const logger = recordingLogger();
    const { b, registry } = threeSources(logger);
    b.mode = 'down';
    await registry.listResources(undefined, ctx(), { limit: 100 });
    b.mode = 'up';
    await until(
      () => registry.health.outage('mem://b/') === undefined,
      'the probe to see the source back',
    );
    expect(logger.lines.filter((l) => l.level === 'info').map((l) => l.message)).toEqual([
      'source answers again; lists include it',
    ]);
    expect((await registry.listResources(undefined, ctx(), { limit: 100 })).items).toHaveLength(15);
  });

  it('stops probing a source once it is unmounted', async () => {
    const { b, registry } = threeSources();
    b.mode = 'down';
    await registry.listResources(undefined, ctx(), { limit: 100 });
    await registry.unmount('mem://b/');
    const calls = b.calls.total;
    // A witness registry with its own down source, probing at the same interval: by its sixth
    // probe, b would have been probed again had it still been.
    const witness = threeSources();
    witness.b.mode = 'down';
    await witness.registry.listResources(undefined, ctx(), { limit: 100 });
    const witnessed = witness.b.calls.total;
    await until(() => witness.b.calls.total >= witnessed + 6, 'six probes of the witness');
    await witness.registry.close();
    expect(b.calls.total).toBe(calls);
    expect(registry.health.outage('mem://b/')).toBeUndefined();
  });

  it("rethrows the caller's own cancellation instead of blaming a source", async () => {
    const { b, registry } = threeSources();
    b.mode = 'hang';
    const controller = new AbortController();
    const listing = registry.listResources(
      undefined,
      { signal: controller.signal },
      { limit: 100 },
    );
    controller.abort(new Error('client cancelled'));
    expect(((await rejection(listing)) as Error).message).toBe('client cancelled');
    expect(registry.health.outage('mem://b/')).toBeUndefined();
  });

  it('refuses a source time budget that is not a whole number of milliseconds', () => {
    for (const value of [0, -1, 1.5, Number.NaN]) {
      expect(() => new Registry({ sourceListTimeoutMs: value })).toThrow(
        /sourceListTimeoutMs: must be a whole number of milliseconds/,
      );
    }
  });
});

describe('the readiness probe', () => {
  it('reports a source a list found down, with its kind, since when and a redacted message, and notices its recovery', async () => {
    const { b, registry } = threeSources();
    expect(await probeSource(b, registry.health, 100)).toEqual({ source: 'mem://b/', ready: true });
    b.mode = 'down';
    await registry.listResources(undefined, ctx(), { limit: 100 });
    const down = await probeSource(b, registry.health, 100);
    expect(down).toMatchObject({ source: 'mem://b/', ready: false, reason: 'unavailable' });
    expect(down.message).toContain('postgres://***@db.internal/app');
    expect(Date.parse(down.since!)).not.toBeNaN();
    b.mode = 'up';
    expect(await probeSource(b, registry.health, 100)).toEqual({ source: 'mem://b/', ready: true });
    expect(registry.health.outage('mem://b/')).toBeUndefined();
  });

  it("uses a source's own ready() and bounds it by the budget", async () => {
    const registry = new Registry();
    const hanging: Provider = {
      ...memoryProvider({ root: 'mem://h/', names: [] }),
      ready: () => new Promise<void>(() => undefined),
    };
    registry.mount(hanging);
    expect(await probeSource(hanging, registry.health, 50)).toMatchObject({
      source: 'mem://h/',
      ready: false,
      reason: 'timeout',
    });
  });

  it('removes credentials from URLs and password parameters', () => {
    expect(
      redactCredentials('connect to postgres://u:p@h:5432/db?password=x&sslmode=require failed'),
    ).toBe('connect to postgres://***@h:5432/db?password=***&sslmode=require failed');
  });
});
