// What a SQL call spends CPU on, and does not (#30 item 4): a `sql_query` answer whose JSON is
// bounded within the result cap without serialising it is not serialised to be measured; a pooled
// call holds one abort listener on its signal at a time, none once it is done, answers an abort
// while it waits for a connection at once and cancels one that came once it holds it.
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pooled } from '../../src/providers/sql/pooled.js';
import { SqlFailure } from '../../src/providers/sql/dialect.js';
import { fitRows, jsonBytesAtMost } from '../../src/providers/sql/views.js';

afterEach(() => vi.restoreAllMocks());

describe('jsonBytesAtMost', () => {
  const values: unknown[] = [
    null,
    true,
    false,
    0,
    -0,
    -1.2345678901234567e-308,
    1e21,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
    '',
    'plain',
    'quote " backslash \\ newline \n tab \t',
    '\u0000\u0001\u001f control',
    'é 中文 😀',
    '\ud800 lone surrogate \udfff',
    [],
    [[1, 'a', null], [2, 'bé', true], []],
  ];

  it('is never below the bytes of the JSON it bounds', () => {
    for (const value of values)
      expect(jsonBytesAtMost(value, Infinity), JSON.stringify(value)).toBeGreaterThanOrEqual(
        Buffer.byteLength(JSON.stringify(value)),
      );
    expect(jsonBytesAtMost(values, Infinity)).toBeGreaterThanOrEqual(
      Buffer.byteLength(JSON.stringify(values)),
    );
  });

  it('does not bound an object (measured exactly instead), nor past its limit', () => {
    expect(jsonBytesAtMost({ $base64: 'AA==' }, Infinity)).toBe(Infinity);
    expect(jsonBytesAtMost([[1, { k: 1 }]], Infinity)).toBe(Infinity);
    expect(jsonBytesAtMost([['x'.repeat(100)]], 50)).toBe(Infinity);
  });
});

describe('fitRows without serialising', () => {
  const rows = [
    [1, 'a'],
    [2, 'bé'],
  ];

  it('does not serialise an answer whose bound fits, and measures one whose bound does not', () => {
    const stringify = vi.spyOn(JSON, 'stringify');
    expect(fitRows(rows, 1 << 20)).toEqual({ rows, dropped: false });
    expect(stringify).not.toHaveBeenCalled();
    // the bound (over 40 bytes) passes a budget the JSON (20 bytes) fits: measured, kept whole
    expect(fitRows(rows, 21)).toEqual({ rows, dropped: false });
    expect(stringify).toHaveBeenCalled();
  });

  it('measures an answer holding objects', () => {
    const stringify = vi.spyOn(JSON, 'stringify');
    const withObject = [[{ $base64: 'AA==' }]];
    expect(fitRows(withObject, 1 << 20)).toEqual({ rows: withObject, dropped: false });
    expect(stringify).toHaveBeenCalled();
  });
});

describe('pooled calls', () => {
  interface Conn {
    id: number;
  }
  const gate = (acquire: () => Promise<Conn>) => {
    const released: [number, boolean][] = [];
    const cancelled: number[] = [];
    const run = pooled<Conn>({
      acquire,
      release: (c, discard) => void released.push([c.id, discard]),
      cancel: (c) => void cancelled.push(c.id),
      classify: (error) =>
        error instanceof SqlFailure ? error : new SqlFailure('invalid', String(error)),
      discards: (failure) => failure.kind === 'unavailable',
      retryStarted: false,
    });
    return { run, released, cancelled };
  };

  it('keeps one abort listener while it waits for a connection and while its work runs, none after', async () => {
    const controller = new AbortController();
    let handOver!: (c: Conn) => void;
    const { run, released } = gate(() => new Promise<Conn>((resolve) => (handOver = resolve)));
    const seen: number[] = [];
    const call = run.run(async () => {
      seen.push(getEventListeners(controller.signal, 'abort').length);
      return 'done';
    }, controller.signal);
    await vi.waitFor(() => expect(handOver).toBeDefined(), { timeout: 10_000 });
    seen.push(getEventListeners(controller.signal, 'abort').length);
    handOver({ id: 1 });
    expect(await call).toBe('done');
    expect(seen).toEqual([1, 1]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(released).toEqual([[1, false]]);
  });

  it('answers an abort while it waits at once, and hands back the connection that comes later', async () => {
    const controller = new AbortController();
    let handOver!: (c: Conn) => void;
    const { run, released, cancelled } = gate(
      () => new Promise<Conn>((resolve) => (handOver = resolve)),
    );
    let worked = false;
    const call = run.run(async () => {
      worked = true;
    }, controller.signal);
    await vi.waitFor(() => expect(handOver).toBeDefined(), { timeout: 10_000 });
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    handOver({ id: 2 });
    await vi.waitFor(() => expect(released).toEqual([[2, false]]), { timeout: 10_000 });
    expect(worked).toBe(false);
    expect(cancelled).toEqual([]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('cancels the statement of a call aborted once it holds its connection, and discards it', async () => {
    const controller = new AbortController();
    const { run, released, cancelled } = gate(() => Promise.resolve({ id: 3 }));
    const call = run.run(() => {
      controller.abort();
      return new Promise<never>(() => undefined);
    }, controller.signal);
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(cancelled).toEqual([3]);
    expect(released).toEqual([[3, true]]);
  });
});
