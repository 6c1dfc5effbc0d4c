// Pins the audit log: one JSON line per operation for each outcome, made of allowed fields only (an
// argument holding a token never shows, credentials in a URI are redacted), buffered and written on
// close and on the interval, a rotated file that keeps N files and neither loses nor tears a line,
// and the same record on the `reservoir:operation` diagnostics channel.
import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { eventually } from '../helpers/eventually.js';
import {
  createAuditLog,
  OPERATION_CHANNEL,
  type OperationEntry,
  type OperationRecord,
} from '../../src/policy/audit.js';

const SECRET = 'sk-live-4f1c9a0b7e2d';

function entry(i: number, extra: Partial<OperationEntry> = {}): OperationEntry {
  return {
    principal: 'alice',
    method: 'resources/read',
    uri: `file:///srv/docs/${i}.md`,
    outcome: 'ok',
    bytes: i,
    durationMs: 1.25,
    ...extra,
  };
}

/** How many lines the live file and its rotations hold (throws on a line being written: not yet). */
function written(path: string): number {
  return [path, ...Array.from({ length: 50 }, (_, i) => `${path}.${i + 1}`)]
    .filter(existsSync)
    .reduce((sum, file) => sum + lines(file).length, 0);
}

function lines(path: string): OperationRecord[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  expect(text === '' || text.endsWith('\n')).toBe(true);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as OperationRecord);
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reservoir-audit-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('createAuditLog', () => {
  it('writes one line per operation to stderr, with the outcome, code, bytes and duration', async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation(((
      chunk: string,
      cb?: (error?: Error | null) => void,
    ) => {
      written.push(chunk);
      cb?.();
      return true;
    }) as typeof process.stderr.write);
    const audit = createAuditLog({ sink: 'stderr' });
    audit.record({
      time: '2026-01-01T00:00:00.000Z',
      principal: 'alice',
      method: 'resources/read',
      uri: 'file:///a.md',
      outcome: 'ok',
      bytes: 12,
      durationMs: 3.14159,
    });
    audit.record({
      principal: 'bob',
      method: 'tools/call',
      name: 'search',
      outcome: 'error',
      code: 'timeout',
      durationMs: 5000,
    });
    audit.record({
      principal: 'bob',
      method: 'prompts/get',
      name: 'summary',
      outcome: 'error',
      durationMs: 1,
    });
    expect(written).toEqual([]); // buffered until the interval or close
    await audit.close();
    const records = written
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[0]).toEqual({
      time: '2026-01-01T00:00:00.000Z',
      principal: 'alice',
      method: 'resources/read',
      uri: 'file:///a.md',
      outcome: 'ok',
      bytes: 12,
      durationMs: 3.1,
    });
    expect(Object.keys(records[1] ?? {})).toEqual([
      'time',
      'principal',
      'method',
      'name',
      'outcome',
      'code',
      'durationMs',
    ]);
    expect(records[1]).toMatchObject({
      principal: 'bob',
      name: 'search',
      outcome: 'error',
      code: 'timeout',
      durationMs: 5000,
    });
    expect(Date.parse(String(records[1]?.time))).not.toBeNaN();
    expect(records[2]).toMatchObject({ outcome: 'error', code: 'internal' });
  });

  it('never writes argument values, content or credentials', async () => {
    const path = join(dir, 'audit.log');
    const audit = createAuditLog({ sink: 'file', path });
    const leaky = {
      ...entry(1, { method: 'tools/call', name: 'query', uri: undefined }),
      arguments: { token: SECRET, sql: 'select 1' },
      contents: [{ text: SECRET }],
      headers: { authorization: `Bearer ${SECRET}` },
    } as OperationEntry;
    audit.record(leaky);
    audit.record(
      entry(2, {
        uri: `https://user:${SECRET}@api.example.com/v1/items?access_token=${SECRET}&page=2&apiKey=${SECRET}`,
      }),
    );
    await audit.close();
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('select 1');
    const [tool, read] = lines(path);
    expect(Object.keys(tool ?? {})).toEqual([
      'time',
      'principal',
      'method',
      'name',
      'outcome',
      'bytes',
      'durationMs',
    ]);
    expect(read?.uri).toBe(
      'https://api.example.com/v1/items?access_token=redacted&page=2&apiKey=redacted',
    );
  });

  it('writes buffered lines on close', async () => {
    const path = join(dir, 'nested', 'audit.log');
    const audit = createAuditLog({ sink: 'file', path, flushIntervalMs: 60_000 });
    for (let i = 0; i < 10; i += 1) audit.record(entry(i));
    await new Promise((resolve) => setImmediate(resolve)); // a turn: a write that record() started would be under way
    expect(lines(path)).toEqual([]);
    await audit.close();
    expect(lines(path).map((r) => r.bytes)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    audit.record(entry(10)); // after close: dropped, not thrown
    await audit.close();
  });

  it('writes buffered lines on its interval', async () => {
    const path = join(dir, 'audit.log');
    const audit = createAuditLog({ sink: 'file', path, flushIntervalMs: 10 });
    audit.record(entry(1));
    await vi.waitFor(() => expect(lines(path)).toHaveLength(1), { timeout: 5000, interval: 10 });
    await audit.close();
  });

  it('rotates by size without losing or tearing a line, keeping N files', async () => {
    const path = join(dir, 'audit.log');
    const audit = createAuditLog({
      sink: 'file',
      path,
      maxBytes: 1024,
      keep: 50,
      flushIntervalMs: 5,
    });
    for (let i = 0; i < 300; i += 1) {
      audit.record(entry(i));
      // Now and then an interval flush (not close) writes what is buffered, so rotations fall between flushes too.
      if (i % 37 === 0)
        await eventually(() => written(path) === i + 1, `an interval flush of line ${i}`);
    }
    await audit.close();
    const files = [path, ...Array.from({ length: 50 }, (_, i) => `${path}.${i + 1}`)]
      .filter(existsSync)
      .reverse();
    expect(files.length).toBeGreaterThan(10);
    const all: number[] = [];
    for (const file of files) {
      expect(statSync(file).size).toBeLessThanOrEqual(1024);
      all.push(...lines(file).map((r) => r.bytes ?? -1));
    }
    expect(all).toEqual(Array.from({ length: 300 }, (_, i) => i));
  });

  it('keeps only the newest N rotated files beside the live one', async () => {
    const path = join(dir, 'audit.log');
    const audit = createAuditLog({ sink: 'file', path, maxBytes: 1024, keep: 2 });
    for (let i = 0; i < 300; i += 1) audit.record(entry(i));
    await audit.close();
    expect([
      existsSync(path),
      existsSync(`${path}.1`),
      existsSync(`${path}.2`),
      existsSync(`${path}.3`),
    ]).toEqual([true, true, true, false]);
    const kept = [...lines(`${path}.2`), ...lines(`${path}.1`), ...lines(path)].map(
      (r) => r.bytes ?? -1,
    );
    expect(kept.at(-1)).toBe(299);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 300 - kept.length + i));
  });

  it('appends to an existing file and rotates it when full', async () => {
    const path = join(dir, 'audit.log');
    const first = createAuditLog({ sink: 'file', path, maxBytes: 1024, keep: 3 });
    for (let i = 0; i < 5; i += 1) first.record(entry(i));
    await first.close();
    const second = createAuditLog({ sink: 'file', path, maxBytes: 1024, keep: 3 });
    for (let i = 5; i < 12; i += 1) second.record(entry(i));
    await second.close();
    const all = [...lines(`${path}.1`), ...lines(path)].map((r) => r.bytes);
    expect(all).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(statSync(`${path}.1`).size).toBeLessThanOrEqual(1024);
  });

  it('publishes the same record on the reservoir:operation diagnostics channel', async () => {
    const received: unknown[] = [];
    const onMessage = (message: unknown): void => void received.push(message);
    const audit = createAuditLog({ sink: 'none' });
    expect(channel(OPERATION_CHANNEL).hasSubscribers).toBe(false);
    audit.record(entry(1)); // nobody listening: nothing published
    subscribe(OPERATION_CHANNEL, onMessage);
    try {
      audit.record({ ...entry(2), arguments: { token: SECRET } } as OperationEntry);
    } finally {
      unsubscribe(OPERATION_CHANNEL, onMessage);
    }
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      principal: 'alice',
      method: 'resources/read',
      uri: 'file:///srv/docs/2.md',
      outcome: 'ok',
      bytes: 2,
    });
    expect(JSON.stringify(received[0])).not.toContain(SECRET);
    await audit.close();
  });

  it('checks its options when built', () => {
    expect(() => createAuditLog({ sink: 'file' } as never)).toThrow(ConfigError);
    expect(() => createAuditLog({ sink: 'file' } as never)).toThrow(/audit\.path/);
    expect(() => createAuditLog({ sink: 'file', path: join(dir, 'a'), keep: 0 })).toThrow(
      /audit\.keep/,
    );
    expect(() => createAuditLog({ sink: 'syslog' } as never)).toThrow(ConfigError);
  });
});
