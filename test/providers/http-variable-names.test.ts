// An endpoint's variable may be called anything, `toString` and `valueOf` too: one a URI leaves out
// is absent from the upstream request, and one a URI gives is sent. The URI's values were kept in
// an object, so a left-out `valueOf` read as Object.prototype's function (its source text went
// upstream as the parameter's value) and `?toString=a` counted as given twice (the URI not found).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpProvider } from '../../src/providers/http/index.js';
import { ctx } from './helpers.js';
import { json, providerFor, Upstream } from './http-upstream.js';

let upstream: Upstream;
let provider: HttpProvider;

beforeAll(async () => {
  upstream = await Upstream.start();
  upstream.route('/items', (req, res) => json({ query: req.url!.split('?')[1] ?? null })(req, res));
  provider = providerFor(upstream, {
    name: 't',
    endpoints: [
      { name: 'items', uri: 'items{?toString,valueOf}', upstream: 'items{?toString,valueOf}' },
    ],
  });
});

afterAll(async () => {
  await provider.close?.();
  await upstream.close();
});

async function upstreamQuery(uri: string): Promise<unknown> {
  const read = await provider.read(uri, ctx());
  return (JSON.parse((read.contents[0] as { text: string }).text) as { query: unknown }).query;
}

describe('endpoint variables named after Object.prototype members', () => {
  it('are sent upstream when the URI gives them, and only then', async () => {
    expect(await upstreamQuery('api://t/items')).toBeNull();
    expect(await upstreamQuery('api://t/items?toString=a')).toBe('toString=a');
    expect(await upstreamQuery('api://t/items?valueOf=b&toString=a')).toBe('toString=a&valueOf=b');
    expect(upstream.requests.map((r) => r.url)).toEqual([
      '/items',
      '/items?toString=a',
      '/items?toString=a&valueOf=b',
    ]);
  });
});
