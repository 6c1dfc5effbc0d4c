// Pins how variable values reach the upstream URL: each value is percent-encoded into exactly one
// path segment or query parameter, so `?`, `#`, `&`, `=`, `@`, `%`, CR/LF and encoded dots can
// never change the upstream host, the segment boundaries or the query structure; a path value
// holding `/` or `\` (in any escaping) or forming a `.` or `..` segment is refused before any
// request (http-dot-segments.test.ts has every spelling); and every request goes to the configured
// origin. Reads go through the Registry, which normalises URIs as a server does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Registry } from '../../src/core/registry.js';
import { sdkTemplateEngine } from '../../src/mcp/templates.js';
import { compileEndpoint, encodeValue } from '../../src/providers/http/template.js';
import { ctx, expectNotFound, rejection } from './helpers.js';
import { providerFor, Upstream } from './http-upstream.js';

let upstream: Upstream;
let registry: Registry;

beforeAll(async () => {
  upstream = await Upstream.start();
  upstream.otherwise((req, res) => {
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ url: req.url, injected: req.headers['x-injected'] ?? null }));
  });
  registry = new Registry({ templateEngine: sdkTemplateEngine }).mount(
    providerFor(upstream, {
      name: 't',
      endpoints: [
        {
          name: 'repos',
          uri: 'users/{user}/repos{?q,page}',
          upstream: 'users/{user}/repos{?q,page}',
        },
        { name: 'file', uri: 'files/{name}.json', upstream: 'raw/{name}/meta' },
        { name: 'ops', uri: 'ops/{a}/{b}/{c}', upstream: 'x{/a}/y{.b}?fixed=1&c={c}' },
      ],
    }),
  );
});
afterAll(async () => {
  await registry.close();
  await upstream.close();
});

/** Reads `uri` and returns the raw request target the upstream received. */
async function sent(uri: string): Promise<string> {
  upstream.reset();
  const result = await registry.read(uri, ctx());
  const body = JSON.parse((result.contents[0] as { text: string }).text) as {
    url: string;
    injected: string | null;
  };
  expect(body.injected).toBeNull();
  expect(upstream.requests).toHaveLength(1);
  expect(upstream.requests[0]!.headers.host).toBe(`127.0.0.1:${upstream.port}`);
  return body.url;
}

describe('http provider: variable encoding', () => {
  it.each([
    ['a question mark', 'users/a%3Fadmin=1/repos', '/users/a%3Fadmin%3D1/repos'],
    ['a hash', 'users/a%23frag/repos', '/users/a%23frag/repos'],
    ['an at sign (userinfo)', 'users/me@evil.example/repos', '/users/me%40evil.example/repos'],
    [
      'CR/LF (header injection)',
      'users/a%0D%0AX-Injected:%201/repos',
      '/users/a%0D%0AX-Injected%3A%201/repos',
    ],
    ['a percent sign', 'users/100%25/repos', '/users/100%25/repos'],
    ['non-ASCII', 'users/caf%C3%A9/repos', '/users/caf%C3%A9/repos'],
    ['sub-delimiters', "users/a!'()*,;$+/repos", '/users/a%21%27%28%29%2A%2C%3B%24%2B/repos'],
    ['three dots (an ordinary name)', 'users/.../repos', '/users/.../repos'],
  ])('keeps %s inside one path segment', async (_what, path, expected) => {
    expect(await sent(`api://t/${path}`)).toBe(expected);
  });

  it.each([
    ['an ampersand and equals', 'q=a%26admin%3Dtrue', '?q=a%26admin%3Dtrue'],
    ['a hash', 'q=x%23y', '?q=x%23y'],
    ['CR/LF', 'q=a%0D%0Ab', '?q=a%0D%0Ab'],
    ['a plus (kept literal, not a space)', 'q=a+b', '?q=a%2Bb'],
    ['a question mark and slash', 'q=%3F%2F..', '?q=%3F%2F..'],
    ['an empty value', 'q=', '?q='],
    ['two parameters in any order', 'page=2&q=x', '?q=x&page=2'],
  ])('keeps %s inside one query parameter', async (_what, query, expected) => {
    expect(await sent(`api://t/users/me/repos?${query}`)).toBe(`/users/me/repos${expected}`);
  });

  it('encodes values in path, label and query expressions alike', async () => {
    expect(await sent('api://t/ops/a%3Fb/c%3Fd/e%26f=g')).toBe(
      '/x/a%3Fb/y.c%3Fd?fixed=1&c=e%26f%3Dg',
    );
  });

  it.each([
    ['a slash', 'users/a%2Fb/repos', 'user'],
    ['a scheme-relative host', 'users/%2F%2Fevil.example/repos', 'user'],
    ['a backslash', 'users/a%5C..%5Cb/repos', 'user'],
    ['an encoded %2e%2e', 'users/%252e%252e/repos', 'uri'],
    ['an encoded slash inside dots', 'users/..%2F..%2Fadmin/repos', 'user'],
    ['a slash in a path expression', 'ops/a%2Fb/c/d', 'a'],
    ['a backslash in a label expression', 'ops/a/b%5Cc/d', 'b'],
  ])('refuses %s in a path variable, before any request', async (_what, path, argument) => {
    upstream.reset();
    const error = await rejection(registry.read(`api://t/${path}`, ctx()));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).data['argument']).toBe(argument);
    expect(upstream.requests).toHaveLength(0);
  });

  it('never sends a request when dot segments in the URI normalise it to another path', async () => {
    upstream.reset();
    for (const uri of [
      'api://t/users/../repos',
      'api://t/users/%2E%2E/repos',
      'api://t/users/.%2e/repos',
      'api://t/users/%2e/repos',
    ]) {
      await expectNotFound(registry.read(uri, ctx()), uri);
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('refuses a value that would form a . or .. segment upstream, before any request', async () => {
    upstream.reset();
    for (const uri of [
      'api://t/files/..json',
      'api://t/files/.%2e.json',
      'api://t/files/%2e%2e.json',
      'api://t/files/%2E.json',
    ]) {
      const error = await rejection(registry.read(uri, ctx()));
      expect(error, uri).toBeInstanceOf(InvalidArgumentError);
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('refuses malformed percent-encoding as an invalid argument', async () => {
    const error = await rejection(registry.read('api://t/users/%zz/repos', ctx()));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).data['argument']).toBe('user');
  });
});

describe('http templates: expansion', () => {
  const endpoint = compileEndpoint('t', 'https://api.example.com/v1/', {
    name: 'e',
    uri: 'a/{v}{?q}',
    upstream: 'p/{v}/s{?q}',
  });
  const hostile = [
    '/',
    '?',
    '#',
    '..',
    '.',
    '%2e%2e',
    '@',
    '\\',
    '\r\n',
    '//evil.example',
    'a/../../b',
    '?x=1#y',
    ':443',
    '[::1]',
    '\u0000',
    'é',
  ];

  it('keeps every hostile value under the configured origin and base path, in one segment and one parameter', () => {
    for (const value of hostile) {
      let url: URL;
      try {
        url = endpoint.expand({ v: value, q: value });
      } catch (error) {
        // A path value holding a separator or a dot segment in any spelling is refused (only the path:
        // the same values pass as query values, below).
        expect(error, JSON.stringify(value)).toBeInstanceOf(InvalidArgumentError);
        expect(
          ['.', '..', '%2e%2e'].includes(value) || /[/\\]/.test(value),
          JSON.stringify(value),
        ).toBe(true);
        expect(endpoint.expand({ v: 'ok', q: value }).searchParams.get('q')).toBe(value);
        continue;
      }
      expect(url.origin).toBe('https://api.example.com');
      expect(url.pathname.split('/'), JSON.stringify(value)).toHaveLength(5);
      expect(decodeURIComponent(url.pathname.split('/')[3]!)).toBe(value);
      expect([...url.searchParams.keys()]).toEqual(['q']);
      expect(url.searchParams.get('q')).toBe(value);
      expect(url.hash).toBe('');
    }
  });

  it('encodes everything outside the RFC 3986 unreserved set', () => {
    expect(encodeValue("AZaz09-._~!*'() /?#[]@$&+,;=%\\", 'v')).toBe(
      'AZaz09-._~%21%2A%27%28%29%20%2F%3F%23%5B%5D%40%24%26%2B%2C%3B%3D%25%5C',
    );
  });
});
