// Path variables of an http source stay inside their segment and under the base path: against an
// upstream that resolves dot segments as leniently as a real server can (it decodes the target
// again and again, treats '\' as '/', folds overlong UTF-8 and fullwidth dots, then resolves), no
// spelling of '.', '..' or a separator in a path value — escaped, double-escaped, mixed case,
// backslashed, overlong — ever reaches it; each is refused with an invalid-argument error naming
// the variable, while ordinary names with dots still pass. Reads go through the Registry, which
// normalises URIs as a server does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, NotFoundError } from '../../src/core/errors.js';
import { Registry } from '../../src/core/registry.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import { httpProvider, type HttpProvider } from '../../src/providers/http/index.js';
import { ctx, rejection } from './helpers.js';

/** What the upstream received (raw target) and where a lenient server would take it. */
interface Seen {
  target: string;
  resolved: string;
}

let server: Server;
let origin: string;
const seen: Seen[] = [];
let registry: Registry;
let provider: HttpProvider;

/** A lenient server's idea of the path a target names: decode until stable, '\' as '/', resolve. */
function resolveLeniently(target: string): string {
  let path = target.split('?')[0]!;
  for (let round = 0; round < 8; round += 1) {
    const next = path
      .replace(/%c0%ae|%e0%80%ae/gi, '.')
      .replace(/%c0%af|%e0%80%af/gi, '/')
      .replace(/%c1%9c/gi, '\\')
      .replace(/%u002e/gi, '.')
      .replace(/%(?:25)?([0-9a-f]{2})/gi, (_m, hex: string) =>
        String.fromCharCode(Number.parseInt(hex, 16)),
      )
      .normalize('NFKC');
    if (next === path) break;
    path = next;
  }
  return new URL(path.replace(/\\/g, '/'), 'http://upstream.test').pathname;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const target = req.url ?? '';
    const resolved = resolveLeniently(target);
    seen.push({ target, resolved });
    const body = resolved.startsWith('/v1/')
      ? { ok: true, resolved }
      : { secret: 'outside the base path', resolved };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = httpProvider({
    name: 't',
    baseUrl: `${origin}/v1/`,
    allowPrivateNetworks: true,
    endpoints: [
      { name: 'repos', uri: 'users/{user}/repos{?q}', upstream: 'users/{user}/repos{?q}' },
      { name: 'file', uri: 'files/{name}', upstream: 'raw{/name}/meta{.name}' },
    ],
  });
  registry = new Registry({ templateEngine: sdkTemplateEngine }).mount(provider);
});
afterAll(async () => {
  await registry.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Escaping spellings of '..', '.', '/' and '\' in an api:// path segment. */
const HOSTILE = [
  '..%2Fadmin',
  '..%2fadmin',
  '%2E%2E%2Fadmin',
  '%2e%2E%2fadmin',
  '.%2E%2F..%2Fadmin',
  'x%2F..%2F..%2F..%2Fadmin',
  '%252e%252e',
  '%252E%252E%252Fadmin',
  '%25252e%25252e',
  '..%255Cadmin',
  '..%5Cadmin',
  '%2E%2E%5C%2E%2E%5Cadmin',
  'a%5C..%5C..%5Cadmin',
  '%25c0%25ae%25c0%25ae',
  '%25c0%25ae%25c0%25ae%25c0%25afadmin',
  '%25e0%2580%25ae%25e0%2580%25ae',
  '%25u002e%25u002e',
  '%EF%BC%8E%EF%BC%8E',
  '%EF%BC%8E%EF%BC%8E%EF%BC%8Fadmin',
  '%E2%80%A5',
  '%2F%2Fevil.example',
  '%2Fadmin',
];

describe('http provider: path variables against a dot-resolving upstream', () => {
  it.each(HOSTILE)('refuses %s in a path variable before any request', async (spelling) => {
    seen.length = 0;
    for (const uri of [`api://t/users/${spelling}/repos`, `api://t/files/${spelling}`]) {
      const error = await rejection(registry.read(uri, ctx()));
      expect(error, uri).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).message, uri).toMatch(
        /path variable may not hold|'\.' or '\.\.' path segment/,
      );
    }
    expect(seen).toEqual([]);
  });

  it('answers a URI whose own dot segments fold it onto another path as missing, without a request', async () => {
    seen.length = 0;
    for (const uri of [
      'api://t/users/../repos',
      'api://t/users/%2E%2E/repos',
      'api://t/users/.%2e/repos',
      'api://t/files/..',
    ]) {
      expect(await rejection(registry.read(uri, ctx())), uri).toBeInstanceOf(NotFoundError);
    }
    expect(seen).toEqual([]);
  });

  it('passes names that only contain dots, and the query may hold anything', async () => {
    seen.length = 0;
    for (const name of ['...', '..b', '.hidden', 'a..b', 'v1.2', '%2E%2E%2E']) {
      const result = await registry.read(`api://t/users/${name}/repos?q=..%2F..%2Fadmin`, ctx());
      expect(JSON.parse((result.contents[0] as { text: string }).text), name).toMatchObject({
        ok: true,
      });
    }
    expect(seen).toHaveLength(6);
    for (const { target, resolved } of seen) {
      expect(resolved, target).toMatch(/^\/v1\/users\/[^/]+\/repos$/);
      expect(target, target).toMatch(/\?q=\.\.%2F\.\.%2Fadmin$/);
    }
  });

  it('never lets a request resolve outside the base path, whatever the variable holds (the provider called directly)', async () => {
    seen.length = 0;
    const values = [
      ...HOSTILE.map((s) => decodeURIComponent(s)),
      '..',
      '.',
      '/',
      '\\',
      'a/b',
      'a\\b',
      '',
      '\u2025',
      '\uFF0E\uFF0E',
      '%c0%ae%c0%ae',
      'ok',
    ];
    for (const value of values) {
      const uri = `api://t/users/${encodeURIComponent(value)}/repos`;
      await provider.read(uri, ctx()).catch(() => undefined);
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const { target, resolved } of seen)
      expect(resolved, target).toMatch(/^\/v1\/users\/[^/]+\/repos$/);
  });
});
