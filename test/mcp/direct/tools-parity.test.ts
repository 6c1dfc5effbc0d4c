// A plain 2025-era `tools/call` on stdio is answered without the SDK's dispatch (mcp/direct/tools.ts,
// mcp/direct-tools.ts), running the handler's own body. Its answer must be indistinguishable from
// the SDK's: two servers over the same data — one as shipped, one with `directReads: false` — get
// the same calls at every 2025-era revision, and every line each writes from the call to its answer
// (log records included) must be the same bytes, as must the audit records the guard publishes.
// The calls reach every end of the handler's body: sql_query on SQLite (rows, a refused write, an
// unknown argument, a missing one), list/read/find_resources and who_am_i, no arguments at all, an
// unknown tool (-32602), a resource_link dropped before 2025-06-18, an embedded blob over the
// client's cap, a non-object structuredContent, `_meta`, a tool's failure and refusal, a missing
// client capability (-32021), `ctx.log` at the connection's level, and the rate limit's refusal.
// (Stdio's local user is under no access rules, so no principal-restricted call exists here.)
// A spy on LoggingServer.asRequest (which only the direct paths call) shows which calls were taken:
// every call of a one-round tool or an unknown name on the shipped server, none on the other, and
// never the multi-round tool's.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LoggingServer } from '../../../src/mcp/logging-server.js';
import { OPERATION_CHANNEL, type OperationRecord } from '../../../src/policy/audit.js';
import type { Reservoir } from '../../../src/server/index.js';
import { removeDir } from '../../providers/helpers.js';
import { CAPPED_CLIENT, Connection, makeData, serveData } from './tool-fixtures.js';

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

let data: ReturnType<typeof makeData>;
const records: OperationRecord[] = [];
const record = (message: unknown): void => void records.push(message as OperationRecord);
const reservoirs: Reservoir[] = [];

beforeAll(() => {
  data = makeData();
  subscribe(OPERATION_CHANNEL, record);
});

afterEach(async () => {
  for (const reservoir of reservoirs.splice(0)) await reservoir.close();
});

afterAll(() => {
  unsubscribe(OPERATION_CHANNEL, record);
  removeDir(data.dir);
});

/** What differs between two runs of one call: a query's elapsed time, a rate limit's retry time. */
function steady(line: string): string {
  return line
    .replace(/"elapsedMs":[\d.]+/g, '"elapsedMs":0')
    .replace(/, [\d.]+ ms\./g, ', 0 ms.')
    .replace(/"retryAfterMs":\d+/g, '"retryAfterMs":0')
    .replace(/retry in [\d.]+ s/g, 'retry in 0 s');
}

/** An audit record as compared: without its timing. */
function comparable(entry: OperationRecord): Omit<OperationRecord, 'time' | 'durationMs'> {
  const { time: _time, durationMs: _duration, ...rest } = entry;
  return rest;
}

type Call = [
  what: string,
  name: string,
  args?: Record<string, unknown> | undefined,
  taken?: boolean,
];

function calls(root: string): Call[] {
  const note = `file://${root}/note.txt`;
  return [
    ['rows', 'sql_query', { sql: 'SELECT id, name FROM users ORDER BY id' }],
    ['rows with params', 'sql_query', { sql: 'SELECT name FROM users WHERE id > ?', params: [1] }],
    ['a refused write', 'sql_query', { sql: 'DELETE FROM users' }],
    ['an unknown argument', 'sql_query', { sql: 'SELECT 1', bogus: true }],
    ['a missing argument', 'sql_query', {}],
    ['a wrong type', 'sql_query', { sql: 42 }],
    ['a listing', 'list_resources', {}],
    ['a listing, no arguments', 'list_resources', undefined],
    ['a listing page', 'list_resources', { limit: 1 }],
    ['a read', 'read_resource', { uri: note }],
    ['a missing file', 'read_resource', { uri: `file://${root}/missing.txt` }],
    ['a find', 'find_resources', { name: '*.txt' }],
    ['who am I', 'who_am_i', {}],
    ['an unknown tool', 'nope', {}],
    ['links', 'links', {}],
    ['a blob', 'blob', {}],
    ['a scalar', 'scalar', {}],
    ['_meta', 'meta', { n: 3 }],
    ['a failure', 'fails', {}],
    ['a refusal', 'refuses', {}],
    ['a missing capability', 'needs', {}],
    ['log records', 'chatty', {}],
    ['a multi-round tool', 'asks', {}, false],
  ];
}

/** Runs `calls` on both servers at `revision` as `client`; the spy counts the direct path's answers. */
async function compare(
  revision: string,
  client: string,
  list: Call[],
  policy?: Parameters<typeof serveData>[2],
): Promise<Map<string, string[]>> {
  const answered = new Map<string, string[]>();
  const direct = serveData(data, true, policy);
  const sdk = serveData(data, false, policy);
  reservoirs.push(direct, sdk);
  const a = new Connection(direct);
  const b = new Connection(sdk);
  await a.initialize(revision, client);
  await b.initialize(revision, client);
  const spy = vi.spyOn(LoggingServer.prototype, 'asRequest');
  try {
    for (const [i, [what, name, args, taken = true]] of list.entries()) {
      const params = args === undefined ? { name } : { name, arguments: args };
      const took = spy.mock.calls.length;
      const audited = records.length;
      const directLines = await a.request(i, 'tools/call', params);
      const directAudit = records.slice(audited).map(comparable);
      expect(spy.mock.calls.length - took, `${what}: answered directly`).toBe(taken ? 1 : 0);
      const sdkTook = spy.mock.calls.length;
      const audit = records.length;
      const sdkLines = await b.request(i, 'tools/call', params);
      expect(spy.mock.calls.length, `${what}: the reference went through the SDK`).toBe(sdkTook);
      expect(directLines.map(steady), `${what} at ${revision}`).toEqual(sdkLines.map(steady));
      expect(directAudit, `${what}: audit`).toEqual(records.slice(audit).map(comparable));
      // One record a round: the multi-round tool's two rounds (the SDK's shim calls it again) make two.
      expect(directAudit.length, `${what}: audited`).toBe(taken ? 1 : 2);
      answered.set(what, directLines);
    }
  } finally {
    spy.mockRestore();
  }
  await a.close();
  await b.close();
  return answered;
}

/** The log records among `lines`: [level, data]. */
function logRecords(lines: string[] | undefined): Array<[string, unknown]> {
  return (lines ?? [])
    .map(
      (line) => JSON.parse(line) as { method?: string; params?: { level: string; data: unknown } },
    )
    .filter((message) => message.method === 'notifications/message')
    .map((message) => [message.params!.level, message.params!.data]);
}

describe.each(REVISIONS)('a plain tools/call at %s', (revision) => {
  it('is answered directly with the bytes, records and audit the SDK gives', async () => {
    const answered = await compare(revision, 'parity', calls(data.root));
    // The connection's level is info: the tool's debug record is not sent, its info and error are.
    expect(logRecords(answered.get('log records'))).toEqual([
      ['info', { step: 1 }],
      ['error', 'loud'],
    ]);
    // A tool's unexpected failure is logged by the server, and the record reaches the client.
    expect(logRecords(answered.get('a failure')).map(([level]) => level)).toEqual(['error']);
    const scalar = JSON.parse(answered.get('a scalar')!.at(-1)!) as { result: unknown };
    expect(scalar.result).toMatchObject({ structuredContent: { result: ['a', 'b'] } });
  });

  it('applies the client blob cap as the SDK does', async () => {
    await compare(revision, CAPPED_CLIENT, [
      ['a capped blob', 'blob', {}],
      ['links under the cap', 'links', {}],
    ]);
  });
});

describe('the guard on a direct tools/call', () => {
  it('refuses past the rate limit at the same call as the SDK, and audits it the same', async () => {
    const policy = { rateLimit: { requests: { perSecond: 0.001, burst: 3 } } };
    const list: Call[] = [
      ['first', 'who_am_i', {}],
      ['second', 'meta', {}],
      ['third', 'sql_query', { sql: 'SELECT 1' }],
      ['over the limit', 'sql_query', { sql: 'SELECT 1' }],
      ['still over', 'nope', {}],
    ];
    await compare('2025-11-25', 'parity', list, policy);
    const refused = records.filter((entry) => entry.code === 'limit_exceeded');
    expect(refused.length).toBeGreaterThanOrEqual(4);
  });
});
