// Pins the HTTP provider's SSRF rules with private networks not allowed: loopback, private,
// link-local, unspecified, unique-local and IPv4-in-IPv6 addresses are refused — as IP literals in
// every spelling (0x7f.1, 2130706433, [::ffff:127.0.0.1]), and after DNS resolution at connect time
// (localhost; a host that rebinds to loopback between two connections) — before a single byte
// reaches them; an allow-list opens exactly the ranges it names; and a host resolving to both an
// allowed and a refused address connects only to the allowed one. Only loopback traffic.
import { isIP, type LookupFunction } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import { addressPolicy, guardedLookup, nonPublicKind } from '../../src/providers/utils/address.js';
import {
  httpProvider,
  type HttpProvider,
  type HttpProviderOptions,
} from '../../src/providers/http/index.js';
import { ctx, rejection } from './helpers.js';
import { respond, Upstream } from './http-upstream.js';

let loopback: Upstream;
let second: Upstream; // on 127.0.0.2, opened by allow-lists
let provider: HttpProvider | undefined;

beforeAll(async () => {
  loopback = await Upstream.start('127.0.0.1');
  second = await Upstream.start('127.0.0.2');
  loopback.otherwise(respond('loopback reached', 'text/plain'));
  second.otherwise(respond('second reached', 'text/plain'));
});
afterAll(async () => {
  await loopback.close();
  await second.close();
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
  loopback.reset();
  second.reset();
});

function make(baseUrl: string, options: Partial<HttpProviderOptions> = {}): HttpProvider {
  provider = httpProvider({
    name: 's',
    baseUrl,
    endpoints: [{ name: 'x', uri: 'x', upstream: 'x' }],
    timeoutMs: 2_000,
    ...options,
  });
  return provider;
}

async function refused(p: HttpProvider, kind: RegExp): Promise<UnavailableError> {
  const error = await rejection(p.read('api://s/x', ctx()));
  expect(error).toBeInstanceOf(UnavailableError);
  const e = error as UnavailableError;
  expect(String(e.data['addressKind'])).toMatch(kind);
  expect(e.message).toMatch(/private networks are not allowed/);
  return e;
}

/** A resolver answering `answers[n]` on the n-th lookup (the last one thereafter). */
function resolver(answers: string[][]): { resolve: LookupFunction; calls: () => number } {
  let n = 0;
  const resolve = ((
    _host: string,
    options: { all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
    const addresses = answers[Math.min(n, answers.length - 1)]!.map((address) => ({
      address,
      family: isIP(address),
    }));
    n += 1;
    setImmediate(() =>
      options.all === true
        ? callback(null, addresses)
        : callback(null, addresses[0]!.address, addresses[0]!.family),
    );
  }) as LookupFunction;
  return { resolve, calls: () => n };
}

describe('http address rules', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'shared'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    // Issue 11: every spelling of the IPv4-embedding forms, and the tunnels/translators.
    ['0:0:0:0:0:ffff:7f00:1', 'loopback.*IPv4-mapped'],
    ['0000:0000:0000:0000:0000:ffff:127.0.0.1', 'loopback.*IPv4-mapped'],
    ['::FFFF:A9FE:A9FE', 'link-local.*IPv4-mapped'],
    ['::ffff:0:127.0.0.1', 'loopback.*IPv4-translated'],
    ['0:0:0:0:ffff:0:a00:1', 'private.*IPv4-translated'],
    ['::127.0.0.1', 'loopback.*IPv4-compatible'],
    ['0:0:0:0:0:0:a9fe:a9fe', 'link-local.*IPv4-compatible'],
    ['::2', 'unspecified.*IPv4-compatible'],
    ['64:ff9b:0:0:0:0:7f00:1', 'loopback.*NAT64'],
    ['0064:ff9b::7f00:0001', 'loopback.*NAT64'],
    ['64:ff9b::169.254.169.254', 'link-local.*NAT64'],
    ['64:ff9b::c0a8:101', 'private.*NAT64'],
    ['64:ff9b:1::1', 'NAT64 local-use'],
    ['64:ff9b:1::808:808', 'NAT64 local-use'],
    ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'NAT64 local-use'],
    ['2002:7f00:1::1', 'loopback.*6to4'],
    ['2002:a9fe:a9fe::', 'link-local.*6to4'],
    ['2002:c0a8:0101:1::1', 'private.*6to4'],
    ['2001::1', 'Teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:0000:ffff:ffff:ffff:ffff:ffff:ffff', 'Teredo'],
    ['100::1', 'discard-only'],
    ['2001:db8::1', 'documentation'],
    ['2001:2::1', 'benchmarking'],
    ['2001:10::1', 'ORCHID'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['fe80::1%eth0', 'link-local'],
  ])('refuses %s (%s)', (address, kind) => {
    expect(nonPublicKind(address)).toMatch(new RegExp(kind));
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '0:0:0:0:0:ffff:808:808',
    '64:ff9b::808:808',
    '64:ff9b:0:0:0:0:8.8.8.8',
    '64:ff9b:2::1',
    '2002:808:808::1',
    '2001:1::1',
    '2001:4860:4860::8888',
  ])('allows public %s', (address) => {
    expect(nonPublicKind(address)).toBeUndefined();
  });

  it('lets an allow-list open exactly the ranges it names', () => {
    const policy = addressPolicy(false, ['10.1.2.0/24', 'fd00::/64']);
    expect(policy.refusal('10.1.2.200')).toBeUndefined();
    expect(policy.refusal('10.1.3.1')).toBe('private');
    expect(policy.refusal('fd00::5')).toBeUndefined();
    expect(policy.refusal('fd00:0:0:1::5')).toMatch(/unique-local/);
    expect(addressPolicy(true, []).refusal('127.0.0.1')).toBeUndefined();
  });

  it('answers both lookup signatures with only allowed addresses', async () => {
    const { resolve } = resolver([['127.0.0.1', '127.0.0.2', '::1']]);
    const lookup = guardedLookup(addressPolicy(false, ['127.0.0.2']), resolve);
    const all = await new Promise((done) =>
      lookup('h', { all: true }, (_e, addresses) => done(addresses)),
    );
    expect(all).toEqual([{ address: '127.0.0.2', family: 4 }]);
    const one = await new Promise((done) =>
      lookup('h', {}, (_e, address, family) => done([address, family])),
    );
    expect(one).toEqual(['127.0.0.2', 4]);
    const none = await new Promise((done) =>
      guardedLookup(addressPolicy(false, []), resolve)('h', {}, (e) => done(e)),
    );
    expect((none as { code: string }).code).toBe('ERR_RESERVOIR_ADDRESS_REFUSED');
  });
});

describe('http provider: SSRF refusals', () => {
  it.each([
    ['a loopback literal', 'http://127.0.0.1:PORT/', /loopback/],
    ['a hex-dotted literal', 'http://0x7f.1:PORT/', /loopback/],
    ['a decimal literal', 'http://2130706433:PORT/', /loopback/],
    ['an octal literal', 'http://017700000001:PORT/', /loopback/],
    ['a short literal', 'http://127.1:PORT/', /loopback/],
    ['an IPv4-mapped IPv6 literal', 'http://[::ffff:127.0.0.1]:PORT/', /loopback/],
    ['an IPv6 loopback literal', 'http://[::1]:PORT/', /loopback/],
    ['the unspecified address', 'http://0.0.0.0:PORT/', /unspecified/],
    ['cloud metadata (link-local)', 'http://169.254.169.254/', /link-local/],
    ['an IPv6 link-local literal', 'http://[fe80::1]:PORT/', /link-local/],
    ['a private literal', 'http://10.0.0.1:PORT/', /private/],
    ['a hostname resolving to loopback (localhost)', 'http://localhost:PORT/', /loopback/],
    ['a NAT64 literal embedding loopback', 'http://[64:ff9b::127.0.0.1]:PORT/', /loopback.*NAT64/],
    ['a NAT64 local-use literal', 'http://[64:ff9b:1::808:808]:PORT/', /NAT64 local-use/],
    ['a Teredo literal', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]:PORT/', /Teredo/],
    ['a 6to4 literal embedding loopback', 'http://[2002:7f00:1::1]:PORT/', /loopback.*6to4/],
  ])('refuses %s before connecting', async (_what, base, kind) => {
    await refused(make(base.replace('PORT', String(loopback.port))), kind);
    expect(loopback.requests).toHaveLength(0);
  });

  it('refuses a hostname whose DNS answer is private, at connect time', async () => {
    const { resolve, calls } = resolver([['192.168.0.10']]);
    await refused(make(`http://internal.example:${loopback.port}/`, { resolve }), /private/);
    expect(calls()).toBe(1);
  });

  it('opens an allow-listed address and nothing else', async () => {
    const p = make(`http://127.0.0.2:${second.port}/`, { allowedNetworks: ['127.0.0.2/32'] });
    expect(((await p.read('api://s/x', ctx())).contents[0] as { text: string }).text).toBe(
      'second reached',
    );
    await provider!.close();
    await refused(
      make(`http://127.0.0.1:${loopback.port}/`, { allowedNetworks: ['127.0.0.2/32'] }),
      /loopback/,
    );
  });

  it('connects only to the allowed address of a host that resolves to several', async () => {
    const { resolve } = resolver([['127.0.0.1', '127.0.0.2']]);
    const p = make(`http://multi.example:${second.port}/`, {
      allowedNetworks: ['127.0.0.2'],
      resolve,
    });
    expect(((await p.read('api://s/x', ctx())).contents[0] as { text: string }).text).toBe(
      'second reached',
    );
    expect(loopback.requests).toHaveLength(0);
  });

  it('checks the address again on every connection: a host rebinding to loopback is refused', async () => {
    second.route(
      '/x',
      (_req, res) => void res.writeHead(302, { location: '/y', connection: 'close' }).end(),
    );
    const { resolve, calls } = resolver([['127.0.0.2'], ['127.0.0.1']]);
    const p = make(`http://rebind.example:${second.port}/`, {
      allowedNetworks: ['127.0.0.2'],
      resolve,
    });
    await refused(p, /loopback/);
    expect(calls()).toBe(2);
    expect(second.hits('/x')).toHaveLength(1);
    expect(loopback.requests).toHaveLength(0);
    second.route('/x', respond('second reached', 'text/plain'));
  });

  it('refuses a redirect from an allowed upstream to a private one', async () => {
    second.route(
      '/x',
      (_req, res) =>
        void res.writeHead(302, { location: `http://127.0.0.1:${loopback.port}/x` }).end(),
    );
    const p = make(`http://127.0.0.2:${second.port}/`, { allowedNetworks: ['127.0.0.2'] });
    const error = await rejection(p.read('api://s/x', ctx()));
    expect(error).toBeInstanceOf(UnavailableError);
    expect(loopback.requests).toHaveLength(0);
    second.route('/x', respond('second reached', 'text/plain'));
  });
});
