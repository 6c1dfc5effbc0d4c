// Pins the policy lifecycle: steps run in their fixed slots whatever order they are given in
// (audit outermost, then authorize, rate-limit, concurrency, deadline, then the handler), `next`
// can be called once, and the real steps together refuse, time out, charge bytes, and audit and
// count every outcome, refusals included.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { ReservoirError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import {
  auditStep,
  composePolicy,
  concurrencyStep,
  createAuditLog,
  createConcurrencyLimiter,
  createMetrics,
  createRateLimiter,
  deadlineStep,
  OPERATION_CHANNEL,
  rateLimitStep,
  type OperationRecord,
  PolicyContext,
  type PolicySlot,
  type PolicyStep,
} from '../../src/policy/index.js';

const alice: Principal = { id: 'alice', kind: 'token', scopes: [] };

function ctx(extra: Partial<ConstructorParameters<typeof PolicyContext>[0]> = {}): PolicyContext {
  return new PolicyContext({
    principal: alice,
    method: 'resources/read',
    target: 'file:///a.md',
    signal: new AbortController().signal,
    ...extra,
  });
}

function tracer(slot: PolicySlot, trace: string[]): PolicyStep {
  return {
    slot,
    async run(_ctx, next) {
      trace.push(`${slot}:before`);
      const result = await next();
      trace.push(`${slot}:after`);
      return result;
    },
  };
}

describe('composePolicy', () => {
  it('runs steps in their lifecycle slots whatever order they are given in', async () => {
    const trace: string[] = [];
    const slots: PolicySlot[] = ['deadline', 'rate-limit', 'audit', 'concurrency', 'authorize'];
    const policy = composePolicy(slots.map((slot) => tracer(slot, trace)));
    const result = await policy(ctx(), async () => {
      trace.push('handler');
      return 42;
    });
    expect(result).toBe(42);
    expect(trace).toEqual([
      'audit:before',
      'authorize:before',
      'rate-limit:before',
      'concurrency:before',
      'deadline:before',
      'handler',
      'deadline:after',
      'concurrency:after',
      'rate-limit:after',
      'authorize:after',
      'audit:after',
    ]);
  });

  it('keeps the given order of steps sharing a slot, and runs the handler alone with no steps', async () => {
    const trace: string[] = [];
    const first = tracer('authorize', trace);
    const second: PolicyStep = {
      slot: 'authorize',
      run: (_c, next) => (trace.push('second'), next()),
    };
    await composePolicy([second, tracer('audit', trace), first])(ctx(), async () =>
      trace.push('handler'),
    );
    expect(trace).toEqual([
      'audit:before',
      'second',
      'authorize:before',
      'handler',
      'authorize:after',
      'audit:after',
    ]);
    expect(await composePolicy([])(ctx(), async (c) => c.method)).toBe('resources/read');
  });

  it('refuses a second call of next', async () => {
    let handled = 0;
    const twice: PolicyStep = {
      slot: 'authorize',
      async run(_ctx, next) {
        await next();
        return next();
      },
    };
    await expect(composePolicy([twice])(ctx(), async () => (handled += 1))).rejects.toThrow(
      /next\(\) called multiple times/,
    );
    expect(handled).toBe(1);
  });

  it('turns a step that throws synchronously into a rejection, and refuses unknown slots', async () => {
    const sync: PolicyStep = {
      slot: 'authorize',
      run() {
        throw new ReservoirError('denied', 'no');
      },
    };
    await expect(composePolicy([sync])(ctx(), async () => 1)).rejects.toThrow('no');
    expect(() =>
      composePolicy([{ slot: 'later' as PolicySlot, run: (_c, next) => next() }]),
    ).toThrow(/unknown policy slot 'later'/);
  });
});

describe('the policy steps together', () => {
  it('audit and count every outcome, refusals by the inner steps included', async () => {
    const records: OperationRecord[] = [];
    const onRecord = (message: unknown): void => void records.push(message as OperationRecord);
    const audit = createAuditLog({ sink: 'none' });
    const metrics = createMetrics();
    const rateLimiter = createRateLimiter({
      requests: { perSecond: 0.05, burst: 3 },
      bytes: { perSecond: 10, burst: 1000 },
    });
    const concurrency = createConcurrencyLimiter({ perPrincipal: 1 });
    const policy = composePolicy([
      deadlineStep(50),
      concurrencyStep(concurrency),
      rateLimitStep(rateLimiter),
      auditStep(audit, metrics),
    ]);
    subscribe(OPERATION_CHANNEL, onRecord);
    try {
      // A read that sets bytes: audited with them, and charged so the next request waits.
      await policy(ctx(), async (c) => {
        c.bytes = 3000;
        return 'content';
      });
      const refusedByBytes = await policy(ctx(), async () => 'never').catch((e: unknown) => e);
      expect((refusedByBytes as ReservoirError).data.kind).toBe('bytes');

      const bob: Principal = { id: 'bob', kind: 'token', scopes: [] };
      // The deadline aborts the handler's signal; the handler sees it through ctx.signal.
      let seenAborted = false;
      const timedOut = await policy(
        ctx({ principal: bob, method: 'tools/call', target: 'search' }),
        (c) => {
          return new Promise((_resolve, reject) =>
            c.signal.addEventListener('abort', () => {
              seenAborted = c.signal.aborted;
              reject(c.signal.reason);
            }),
          );
        },
      ).catch((e: unknown) => e);
      expect((timedOut as ReservoirError).code).toBe('timeout');
      expect(seenAborted).toBe(true);

      // One request in flight per principal: a second one at the same time is refused.
      let finish: () => void = () => undefined;
      const slow = policy(
        ctx({ principal: bob }),
        () => new Promise<void>((resolve) => (finish = resolve)),
      );
      const refused = await policy(ctx({ principal: bob }), async () => 'never').catch(
        (e: unknown) => e,
      );
      expect((refused as ReservoirError).data.kind).toBe('concurrent_requests');
      finish();
      await slow;
      expect(concurrency.stats().request).toBe(0);
      // bob has spent his burst of 3 requests (windows here are long: no wall-clock race).
      expect(
        (
          (await policy(ctx({ principal: bob }), async () => 1).catch(
            (e: unknown) => e,
          )) as ReservoirError
        ).data.kind,
      ).toBe('requests');
    } finally {
      unsubscribe(OPERATION_CHANNEL, onRecord);
      await audit.close();
    }

    expect(
      records.map((r) => [r.principal, r.method, r.outcome, r.code ?? null, r.bytes ?? null]),
    ).toEqual([
      ['alice', 'resources/read', 'ok', null, 3000],
      ['alice', 'resources/read', 'error', 'limit_exceeded', null],
      ['bob', 'tools/call', 'error', 'timeout', null],
      ['bob', 'resources/read', 'error', 'limit_exceeded', null],
      ['bob', 'resources/read', 'ok', null, null],
      ['bob', 'resources/read', 'error', 'limit_exceeded', null],
    ]);
    expect(records[0]?.uri).toBe('file:///a.md');
    expect(records[2]?.name).toBe('search');
    const text = metrics.render();
    expect(text).toContain('reservoir_requests_total{method="resources/read",outcome="ok"} 2');
    expect(text).toContain('reservoir_requests_total{method="resources/read",outcome="error"} 3');
    expect(text).toContain('reservoir_errors_total{code="limit_exceeded"} 3');
    expect(text).toContain('reservoir_errors_total{code="timeout"} 1');
    expect(text).toContain('reservoir_read_bytes_total 3000');
  });

  it('checks the deadline when the step is built', () => {
    expect(() => deadlineStep(0)).toThrow(RangeError);
    expect(() => deadlineStep(Number.NaN)).toThrow(RangeError);
  });
});
