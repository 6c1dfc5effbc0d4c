// Pins change detection by polling: a watched URI is polled at pollMs with If-None-Match, a changed
// body is one `updated` (a 304 or an identical body is none), a resource that disappears is a change,
// a failing upstream is not (and polling recovers); a poll refreshes the cache, so a read after the
// notification sees the new content even when the old one was fresh; one poll serves every watcher
// of a URI and stops when the last leaves (or on close); a missing URI is NotFoundError and starts
// nothing.
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HttpProvider } from '../../src/providers/http/index.js';
import { waitFor } from '../subscriptions/harness.js';
import { ctx, expectNotFound } from './helpers.js';
import { providerFor, Upstream } from './http-upstream.js';

const POLL_MS = 50;

let upstream: Upstream;
let provider: HttpProvider | undefined;
/** What /doc answers: a body and headers, or a bare status. */
let doc: { body: string; headers: Record<string, string> } | number = {
  body: 'v1',
  headers: { etag: '"1"' },
};

beforeAll(async () => {
  upstream = await Upstream.start();
  upstream.route('/doc', (req, res: ServerResponse) => {
    if (typeof doc === 'number') return void res.writeHead(doc).end();
    if (doc.headers['etag'] !== undefined && req.headers['if-none-match'] === doc.headers['etag'])
      return void res.writeHead(304, doc.headers).end();
    res.writeHead(200, { 'content-type': 'text/plain', ...doc.headers }).end(doc.body);
  });
  upstream.otherwise((req, res) => {
    const m = /^\/items\/(\w+)$/.exec(req.url ?? '');
    if (m === null) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain', etag: '"i"' }).end(`item ${m[1]}`);
  });
});
afterAll(async () => {
  await upstream.close();
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
  upstream.reset();
  doc = { body: 'v1', headers: { etag: '"1"' } };
});

function make(): HttpProvider {
  provider = providerFor(upstream, {
    pollMs: POLL_MS,
    endpoints: [
      { name: 'doc', uri: 'doc', upstream: 'doc' },
      { name: 'item', uri: 'items/{id}', upstream: 'items/{id}' },
    ],
  });
  return provider;
}

const polls = (): number => upstream.hits('/doc').length;

/**
 * Proves `rounds` more poll intervals went by: a witness provider, polling its own URI at the same
 * pollMs, is heard that many times. Anything still polling /doc would have polled meanwhile.
 */
async function afterWitnessPolls(rounds: number): Promise<void> {
  const witness = providerFor(upstream, {
    pollMs: POLL_MS,
    endpoints: [{ name: 'item', uri: 'items/{id}', upstream: 'items/{id}' }],
  });
  try {
    const stop = await witness.watch!('api://test/items/witness', () => undefined);
    const start = upstream.hits('/items/witness').length;
    await waitFor(
      () => upstream.hits('/items/witness').length >= start + rounds,
      `${rounds} polls of the witness`,
    );
    stop();
  } finally {
    await witness.close();
  }
}

describe('http provider: change detection by polling', () => {
  it('notifies once per changed body, polling with If-None-Match', async () => {
    const p = make();
    let changes = 0;
    const stop = await p.watch!('api://test/doc', () => (changes += 1));
    await waitFor(() => polls() >= 3, 'three polls');
    expect(changes).toBe(0);
    expect(
      upstream
        .hits('/doc')
        .slice(1)
        .every((h) => h.headers['if-none-match'] === '"1"'),
    ).toBe(true);
    doc = { body: 'v2', headers: { etag: '"2"' } };
    await waitFor(() => changes === 1, 'the change');
    const after = polls();
    await waitFor(() => polls() >= after + 3, 'three more polls');
    expect(changes).toBe(1);
    stop();
  });

  it('does not notify when an un-validated body comes back identical', async () => {
    doc = { body: 'same', headers: {} };
    const p = make();
    let changes = 0;
    const stop = await p.watch!('api://test/doc', () => (changes += 1));
    await waitFor(() => polls() >= 4, 'four polls');
    expect(changes).toBe(0);
    doc = { body: 'different', headers: {} };
    await waitFor(() => changes === 1, 'the change');
    stop();
  });

  it('treats disappearance as a change, and a failing upstream as none until it recovers', async () => {
    const p = make();
    let changes = 0;
    const stop = await p.watch!('api://test/doc', () => (changes += 1));
    doc = 503;
    let before = polls();
    await waitFor(() => polls() >= before + 3, 'polls while failing');
    expect(changes).toBe(0);
    doc = { body: 'v1', headers: { etag: '"1"' } };
    before = polls();
    await waitFor(() => polls() >= before + 2, 'polls after recovery');
    expect(changes).toBe(0);
    doc = 404;
    await waitFor(() => changes === 1, 'the disappearance');
    doc = { body: 'back', headers: { etag: '"b"' } };
    await waitFor(() => changes === 2, 'the reappearance');
    stop();
  });

  it('refreshes the cache, so a read after the notification sees the new content', async () => {
    doc = { body: 'old', headers: { etag: '"o"', 'cache-control': 'max-age=600' } };
    const p = make();
    expect(((await p.read('api://test/doc', ctx())).contents[0] as { text: string }).text).toBe(
      'old',
    );
    let changes = 0;
    const stop = await p.watch!('api://test/doc', () => (changes += 1));
    doc = { body: 'new', headers: { etag: '"n"', 'cache-control': 'max-age=600' } };
    await waitFor(() => changes === 1, 'the change');
    expect(((await p.read('api://test/doc', ctx())).contents[0] as { text: string }).text).toBe(
      'new',
    );
    stop();
  });

  it('polls once for every watcher of a URI and stops when the last one leaves', async () => {
    const p = make();
    let a = 0;
    let b = 0;
    const stopA = await p.watch!('api://test/doc', () => (a += 1));
    const stopB = await p.watch!('api://test/doc', () => (b += 1));
    expect(p.stats().polled).toBe(1);
    doc = { body: 'v2', headers: { etag: '"2"' } };
    await waitFor(() => a === 1 && b === 1, 'both watchers notified');
    stopA();
    stopA();
    expect(p.stats().polled).toBe(1);
    doc = { body: 'v3', headers: { etag: '"3"' } };
    await waitFor(() => b === 2, 'the remaining watcher notified');
    expect(a).toBe(1);
    stopB();
    expect(p.stats().polled).toBe(0);
    await afterWitnessPolls(1); // a poll already on the wire when it stopped lands first
    const stoppedAt = polls();
    await afterWitnessPolls(3);
    expect(polls()).toBe(stoppedAt);
  });

  it('watches template URIs too', async () => {
    const p = make();
    const stop = await p.watch!('api://test/items/abc', () => undefined);
    await waitFor(() => upstream.hits('/items/abc').length >= 2, 'polls of the item');
    stop();
  });

  it('refuses to watch a missing resource or an unknown URI, and starts nothing', async () => {
    const p = make();
    doc = 404;
    await expectNotFound(
      Promise.resolve(p.watch!('api://test/doc', () => undefined)),
      'api://test/doc',
    );
    await expectNotFound(
      Promise.resolve(p.watch!('api://test/nothing', () => undefined)),
      'api://test/nothing',
    );
    expect(p.stats().polled).toBe(0);
    const before = polls();
    await afterWitnessPolls(3);
    expect(polls()).toBe(before);
  });

  it('stops every poll on close', async () => {
    const p = make();
    await p.watch!('api://test/doc', () => undefined);
    await p.watch!('api://test/items/x', () => undefined);
    expect(p.stats().polled).toBe(2);
    await p.close();
    expect(p.stats().polled).toBe(0);
    await afterWitnessPolls(1); // a poll already on the wire at close lands first
    const before = upstream.hits('/doc').length + upstream.hits('/items/x').length;
    await afterWitnessPolls(3);
    expect(upstream.hits('/doc').length + upstream.hits('/items/x').length).toBe(before);
  });
});
