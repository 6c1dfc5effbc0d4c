// A prefix-scoped s3 source never sends a key with a '.' or '..' segment to the store, in any
// spelling — escaped, double-escaped, mixed case, backslashed, overlong UTF-8, fullwidth — on any
// route (read, canonical, directory, subscribe, completion), so a store or proxy that resolves
// dot segments cannot take it outside its prefix. The source talks to s3rver through a recording
// proxy: every request target the store receives is checked, and the refused URIs add none.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidUriError, NotFoundError } from '../../src/core/errors.js';
import { Registry } from '../../src/core/registry.js';
import { s3Provider, type S3Provider } from '../../src/providers/s3/index.js';
import { ctx, rejection } from './helpers.js';
import { LocalS3 } from './s3-server.js';

let s3: LocalS3;
let proxy: Server;
const targets: string[] = [];
let provider: S3Provider;
let registry: Registry;

beforeAll(async () => {
  s3 = await LocalS3.start();
  await s3.bucket('jail');
  await s3.putMany('jail', [
    ['docs/ok.txt', 'inside'],
    ['secret.txt', 'outside the prefix'],
    ['docs/..b/x.txt', 'a name with dots'],
  ]);
  const store = new URL(s3.endpoint);
  proxy = createServer((req, res) => {
    targets.push(req.url ?? '');
    const forward = request(
      {
        host: store.hostname,
        port: store.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  provider = s3Provider({
    ...s3.source('jail', { prefix: 'docs/', pollIntervalMs: 60_000 }),
    endpoint,
  });
  registry = new Registry().mount(provider);
}, 60_000);
afterAll(async () => {
  await registry?.close();
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) =>
    proxy === undefined ? resolve() : proxy.close(() => resolve()),
  );
  await s3?.close();
});

/** Spellings, in an s3:// path, of a key under docs/ that climbs out to secret.txt. */
const ESCAPES = [
  '..%2Fsecret.txt',
  '..%2fsecret.txt',
  '%2E%2E%2Fsecret.txt',
  '%2e%2E%2fsecret.txt',
  '.%2E%2Fsecret.txt',
  '%2E.%2Fsecret.txt',
  'x%2F..%2F..%2Fsecret.txt',
  '%252e%252e%252fsecret.txt',
  '%252E%252E/secret.txt',
  '%25252e%25252e%25252fsecret.txt',
  '..%5Csecret.txt',
  '..%5csecret.txt',
  '%2E%2E%5Csecret.txt',
  '..%255csecret.txt',
  '%25c0%25ae%25c0%25ae%25c0%25afsecret.txt',
  '%25C0%25AE%25C0%25AE/secret.txt',
  '%25e0%2580%25ae%25e0%2580%25ae/secret.txt',
  '%25u002e%25u002e%25u002fsecret.txt',
  '%EF%BC%8E%EF%BC%8E%EF%BC%8Fsecret.txt',
  '%E2%80%A5/secret.txt',
  '.%2Fsecret.txt',
];

/** Every key a request target the store received names (path-style: /BUCKET/KEY). */
function sentKeys(): string[] {
  return targets.map((target) =>
    decodeURIComponent(target.split('?')[0]!.replace(/^\/jail\/?/, '')),
  );
}

describe('s3 provider: keys stay in their prefix', () => {
  it('reads an ordinary key, and a key whose segment only contains dots, through the recording proxy', async () => {
    targets.length = 0;
    const ok = await registry.read('s3://jail/docs/ok.txt', ctx());
    expect((ok.contents[0] as { text: string }).text).toBe('inside');
    const dots = await registry.read('s3://jail/docs/..b/x.txt', ctx());
    expect((dots.contents[0] as { text: string }).text).toBe('a name with dots');
    expect(sentKeys()).toEqual(['docs/ok.txt', 'docs/..b/x.txt']);
  });

  it.each(ESCAPES)(
    'refuses docs/%s on every route and sends the store nothing',
    async (spelling) => {
      targets.length = 0;
      const uri = `s3://jail/docs/${spelling}`;
      const refusals = [
        await rejection(registry.read(uri, ctx())),
        await rejection(provider.read(uri, ctx())),
        await rejection(provider.canonical(uri, ctx())),
        await rejection(provider.watch(uri, () => undefined)),
        await rejection(provider.readDirectory(`${uri}/`, undefined, 10, ctx())),
      ];
      for (const error of refusals) {
        // The registry answers a URI whose own dot segments fold it away as missing; the provider
        // refuses every spelling it receives by name.
        expect(
          error instanceof InvalidUriError || error instanceof NotFoundError,
          String(error),
        ).toBe(true);
        if (error instanceof InvalidUriError)
          expect(error.message).toMatch(/may not be '\.' or '\.\.'/);
      }
      expect(targets).toEqual([]);
    },
  );

  it('completes no key for typed text that climbs out, and still completes names starting with dots', async () => {
    targets.length = 0;
    const complete = provider.templates()[0]!.complete!['key']!;
    for (const typed of ['..%2F', '%2E%2E%2Fsec', 'x%2F..%2F', '..%5C', '%252e%252e%252f']) {
      expect((await complete(typed, {}, ctx())).values, typed).toEqual([]);
    }
    expect(targets).toEqual([]);
    expect((await complete('..', {}, ctx())).values).toEqual(['..b/']);
  });

  it('never sends the store a key with a dot segment, whatever the route was asked', async () => {
    for (const key of sentKeys()) {
      for (const segment of key.split(/[/\\]/)) expect(['.', '..'], key).not.toContain(segment);
    }
    const listed = (await provider.list(undefined, 100, ctx())).items.map((item) => item.uri);
    expect(listed).toEqual(['s3://jail/docs/..b/x.txt', 's3://jail/docs/ok.txt']);
  });
});
