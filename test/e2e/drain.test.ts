// Issue 25, item 1: shutdown drains. Over the built CLI and the real SDK client, on stdio and
// Streamable HTTP, in both protocol eras: 32 slow requests (reads and read_resource calls, held by
// an upstream the test controls) in flight at SIGTERM are all answered complete, a request that
// arrives during the drain is refused, and the process exits 0; a second SIGTERM exits at once
// (143); past the grace period the server exits without the stragglers. Over a real pipe, every
// line piped into stdin before its end is answered — `initialize` + `tools/list`, and a slow read.
import { once } from 'node:events';
import { type Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, label, TARGETS } from '../helpers/clients.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';
import { eraParams, initializeParams, RawStdio } from '../helpers/wire.js';
import { settle, waitFor } from '../security/harness.js';
import {
  DRAIN_STARTED,
  DRAINED,
  HeldUpstream,
  logEntries,
  startServer,
  writeDrainConfig,
} from './drain-harness.js';

const IN_FLIGHT = 32;
let dir: string;
let upstream: HeldUpstream;
let config: string;
const cleanup = new Cleanup();

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-drain-');
  upstream = await HeldUpstream.start();
  config = writeDrainConfig(dir, upstream.upstream.origin);
});
afterEach(async () => {
  upstream.releaseAll();
  await cleanup.run();
});
afterAll(async () => {
  await upstream.close();
  removeTree(dir);
});

/** Half reads (the direct paths), half `read_resource` calls (the SDK's dispatch). */
function slowRequest(client: Client, id: string, i: number): Promise<unknown> {
  const uri = `api://slow/items/${id}`;
  return i % 2 === 0
    ? client.readResource({ uri })
    : client.callTool({ name: 'read_resource', arguments: { uri } });
}

/** The upstream's answer for item `id`, as the read or the tool result carries it. */
function expectAnswered(result: unknown, id: string, i: number): void {
  if (i % 2 === 0) {
    expect((result as { contents: { text: string }[] }).contents[0]!.text).toBe(
      JSON.stringify({ answered: true, path: `/items/${id}` }),
    );
  } else {
    expect((result as { isError?: boolean }).isError).not.toBe(true);
    expect(JSON.stringify(result)).toContain(
      JSON.stringify(JSON.stringify({ answered: true, path: `/items/${id}` })).slice(1, -1),
    );
  }
}

describe.each(TARGETS)('drain on SIGTERM, $transport $era era', (target) => {
  it(`answers all ${IN_FLIGHT} requests in flight at SIGTERM, refuses one arriving during the drain, and exits 0`, async () => {
    const server = await startServer(target, config, [], cleanup);
    const ids = Array.from(
      { length: IN_FLIGHT },
      (_, i) => `${target.transport}-${target.era}-${i}`,
    );
    const answers = ids.map((id, i) => settle(slowRequest(server.client, id, i)));
    await waitFor(
      () => upstream.held.length === IN_FLIGHT,
      `${IN_FLIGHT} upstream requests in flight`,
      30_000,
    );

    server.child.kill('SIGTERM');
    await waitFor(
      () => logEntries(server.stderr(), DRAIN_STARTED).length === 1,
      'the drain to start',
      10_000,
    );
    const late = await settle(server.client.readResource({ uri: 'api://slow/items/late' }));
    expect(late.ok).toBe(false);
    // Over stdio the refusal is an answer on the connection; over HTTP the listener is closed.
    if (target.transport === 'stdio' && !late.ok)
      expect(late.error).toMatchObject({
        code: -32011,
        data: { code: 'unavailable', reason: 'shutting_down' },
      });
    expect(upstream.held.length).toBe(IN_FLIGHT);

    upstream.releaseAll();
    const settled = await Promise.all(answers);
    settled.forEach((outcome, i) => {
      expect(
        outcome.ok,
        `${label(target)} request ${i}: ${outcome.ok ? '' : String(outcome.error)}`,
      ).toBe(true);
      if (outcome.ok) expectAnswered(outcome.value, ids[i]!, i);
    });
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(logEntries(server.stderr(), DRAINED)).toHaveLength(1);
  });

  it('exits at once with 143 on a second SIGTERM, without waiting for the request in flight', async () => {
    const server = await startServer(target, config, [], cleanup);
    const answer = settle(
      slowRequest(server.client, `${target.transport}-${target.era}-second`, 0),
    );
    await waitFor(() => upstream.held.length === 1, 'the upstream request in flight', 30_000);
    server.child.kill('SIGTERM');
    await waitFor(
      () => logEntries(server.stderr(), DRAIN_STARTED).length === 1,
      'the drain to start',
      10_000,
    );
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 143, signal: null });
    await server.client.close().catch(() => undefined);
    expect((await answer).ok).toBe(false);
  });
});

describe('drain past the grace period', () => {
  it('exits 0 once --shutdown-grace-ms runs out, logging the request left unanswered', async () => {
    const server = await startServer(
      { transport: 'http', era: '2026' },
      config,
      ['--shutdown-grace-ms', '200'],
      cleanup,
    );
    const answer = settle(slowRequest(server.client, 'grace', 0));
    await waitFor(() => upstream.held.length === 1, 'the upstream request in flight', 30_000);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(logEntries(server.stderr(), 'shut down with requests unanswered')).toMatchObject([
      { unanswered: 1, graceMs: 200 },
    ]);
    expect((await answer).ok).toBe(false);
  });
});

describe('end of stdin through a real pipe', () => {
  it.each(['2025', '2026'] as const)(
    'answers every request piped in before the end of input (%s era) and exits 0',
    async (era) => {
      const raw = new RawStdio(['serve', '--config', config, '--log-level', 'warn']);
      // 'close' comes once stdout was read to its end (the exit code may come before the last answer).
      const closed = once(raw.child, 'close');
      cleanup.add(() => raw.kill());
      const lines =
        era === '2025'
          ? [
              { jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams() },
              { jsonrpc: '2.0', method: 'notifications/initialized' },
              { jsonrpc: '2.0', id: 2, method: 'tools/list' },
            ]
          : [
              { jsonrpc: '2.0', id: 1, method: 'server/discover', params: eraParams('2026') },
              { jsonrpc: '2.0', id: 2, method: 'tools/list', params: eraParams('2026') },
            ];
      // All in one write, then the end of input: the lines arrive with (or just before) EOF.
      raw.child.stdin.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
      await closed;
      expect(await raw.exited).toEqual({ code: 0, signal: null });
      const answers = raw.lines.map(
        (line) => JSON.parse(line) as { id: number; result?: Record<string, unknown> },
      );
      expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
      expect(answers.every((a) => a.result !== undefined)).toBe(true);
      expect(answers.find((a) => a.id === 2)!.result!['tools']).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'read_resource' })]),
      );
    },
  );

  it('answers a slow read piped in before the end of input once its upstream answers, then exits 0', async () => {
    const raw = new RawStdio(['serve', '--config', config, '--log-level', 'warn']);
    // 'close' comes once stdout was read to its end (the exit code may come before the last answer).
    const closed = once(raw.child, 'close');
    cleanup.add(() => raw.kill());
    raw.child.stdin.end(
      [
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams() },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'resources/read',
          params: { uri: 'api://slow/items/piped' },
        },
      ]
        .map((line) => `${JSON.stringify(line)}\n`)
        .join(''),
    );
    await waitFor(() => upstream.held.length === 1, 'the piped read to reach the upstream', 30_000);
    upstream.releaseAll();
    await closed;
    expect(await raw.exited).toEqual({ code: 0, signal: null });
    const read = raw.lines
      .map((line) => JSON.parse(line) as { id: number; result?: { contents: { text: string }[] } })
      .find((a) => a.id === 2);
    expect(read?.result?.contents[0]?.text).toBe(
      JSON.stringify({ answered: true, path: '/items/piped' }),
    );
  });
});
