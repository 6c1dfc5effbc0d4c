// Issue 11, item 10: HTTPS served directly. Certificates are made at test time with openssl
// (self-signed for 127.0.0.1); the SDK client trusts them through an undici Agent. Both eras list
// and read over https; a certificate swapped on disk is served to the next connection without a
// restart (its fingerprint seen by a new TLS connection), a swap caught half-way keeps the previous
// pair; missing, non-PEM and mismatched files are clear start-up errors, from the library and from
// `reservoir serve` (flags and config file).
import { execFile } from 'node:child_process';
import { copyFileSync, renameSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { hasOpenssl, makeCertificate, type CertificatePair } from '../helpers/certificate.js';
import { Cleanup, ERAS, newClient, spawnHttpServer, type Era } from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const run = promisify(execFile);
const cleanup = new Cleanup();
let dir: string;
let docs: string;
const started: Reservoir[] = [];

const pairs: Record<'a' | 'b', CertificatePair> = {} as Record<'a' | 'b', CertificatePair>;

/** A fetch for the SDK client that trusts the given certificates (and nothing else). */
function trustingFetch(...pems: string[]): typeof fetch {
  const agent = new Agent({ connect: { ca: pems } });
  cleanup.add(() => agent.close());
  return ((url: string | URL, init?: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
}

async function connectHttps(era: Era, url: string, ...pems: string[]): Promise<Client> {
  const client = newClient(era);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: trustingFetch(...pems),
  });
  await client.connect(transport);
  cleanup.add(async () => {
    if (era === '2025') await transport.terminateSession().catch(() => undefined);
    await client.close();
  });
  return client;
}

/** The SHA-256 fingerprint of the certificate a new TLS connection to `url` is shown. */
function servedFingerprint(url: string, ...pems: string[]): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.hostname, port: Number(target.port), ca: pems }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.once('error', reject);
  });
}

/** Replaces `target` by a copy of `source` the way deploy tools do: write aside, rename over. */
function swapIn(source: string, target: string): void {
  copyFileSync(source, `${target}.new`);
  renameSync(`${target}.new`, target);
}

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-tls-');
  docs = join(dir, 'docs');
  writeTree(docs, { 'a.md': 'alpha\n' });
  if (!hasOpenssl) return;
  pairs.a = await makeCertificate(dir, 'a');
  pairs.b = await makeCertificate(dir, 'b');
});

afterAll(async () => {
  await cleanup.run();
  await Promise.allSettled(started.map((r) => r.close()));
  removeTree(dir);
});

async function serveTls(cert: string, key: string): Promise<string> {
  const reservoir = createReservoir({ providers: [filesProvider({ root: docs })] });
  started.push(reservoir);
  const endpoint = await reservoir.listen({ host: '127.0.0.1', port: 0, tls: { cert, key } });
  return endpoint.url;
}

describe.skipIf(!hasOpenssl)('HTTPS', () => {
  it.each(ERAS)('serves the SDK client over https, listing and reading (%s era)', async (era) => {
    const url = await serveTls(pairs.a.cert, pairs.a.key);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await connectHttps(era, url, pairs.a.pem);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([`${dirUri(docs)}a.md`]);
    expect((await client.readResource({ uri: `${dirUri(docs)}a.md` })).contents[0]).toMatchObject({
      text: 'alpha\n',
    });
  });

  it('is refused by a client that does not trust the certificate, and does not answer plain HTTP', async () => {
    const url = await serveTls(pairs.a.cert, pairs.a.key);
    await expect(servedFingerprint(url, pairs.b.pem)).rejects.toThrow(
      /self[- ]signed|unable to verify|certificate/i,
    );
    const plain = url.replace(/^https:/, 'http:');
    const answer = await fetch(plain, { method: 'POST', body: '{}' }).then(
      (r) => r.status,
      (error: unknown) => error,
    );
    expect(answer).toBeInstanceOf(Error);
  });

  it('serves a certificate swapped on disk to the next connection, without a restart', async () => {
    const cert = join(dir, 'live.crt');
    const key = join(dir, 'live.key');
    copyFileSync(pairs.a.cert, cert);
    copyFileSync(pairs.a.key, key);
    const url = await serveTls(cert, key);
    expect(await servedFingerprint(url, pairs.a.pem, pairs.b.pem)).toBe(pairs.a.fingerprint);

    swapIn(pairs.b.cert, cert);
    swapIn(pairs.b.key, key);
    expect(await servedFingerprint(url, pairs.a.pem, pairs.b.pem)).toBe(pairs.b.fingerprint);
    // A client that trusts only the new certificate is served.
    const client = await connectHttps('2026', url, pairs.b.pem);
    expect((await client.readResource({ uri: `${dirUri(docs)}a.md` })).contents[0]).toMatchObject({
      text: 'alpha\n',
    });
  });

  it('keeps serving the previous pair while a swap is half done (new certificate, old key), then the new one', async () => {
    const cert = join(dir, 'half.crt');
    const key = join(dir, 'half.key');
    copyFileSync(pairs.a.cert, cert);
    copyFileSync(pairs.a.key, key);
    const url = await serveTls(cert, key);
    swapIn(pairs.b.cert, cert);
    expect(await servedFingerprint(url, pairs.a.pem, pairs.b.pem)).toBe(pairs.a.fingerprint);
    swapIn(pairs.b.key, key);
    expect(await servedFingerprint(url, pairs.a.pem, pairs.b.pem)).toBe(pairs.b.fingerprint);
  });
});

describe.skipIf(!hasOpenssl)('slow clients over TLS', () => {
  it('closes a connection that never finishes its TLS handshake at the head timeout, not after 120 s', async () => {
    const reservoir = createReservoir({ providers: [filesProvider({ root: docs })] });
    started.push(reservoir);
    const { url } = await reservoir.listen({
      host: '127.0.0.1',
      port: 0,
      tls: { cert: pairs.a.cert, key: pairs.a.key },
      timeouts: { headersMs: 1_000, requestMs: 5_000 },
    });
    const target = new URL(url);
    const socket = netConnect(Number(target.port), target.hostname);
    socket.on('error', () => undefined);
    const elapsedMs = await new Promise<number>((resolve) => {
      let start = 0;
      socket.once('connect', () => {
        start = performance.now();
        socket.write(Buffer.from([0x16, 0x03, 0x01])); // the first bytes of a ClientHello, then nothing
      });
      socket.once('close', () => resolve(performance.now() - start));
    });
    // Not before the head timeout; and the close came at all (the request timeout is 5 s and the
    // test's own timeout stops a server that would wait 120 s), which is the behaviour pinned.
    expect(elapsedMs).toBeGreaterThanOrEqual(950);
  });

  it('cuts off a client dribbling its request head over TLS around the head timeout', async () => {
    const reservoir = createReservoir({ providers: [filesProvider({ root: docs })] });
    started.push(reservoir);
    const { url } = await reservoir.listen({
      host: '127.0.0.1',
      port: 0,
      tls: { cert: pairs.a.cert, key: pairs.a.key },
      timeouts: { headersMs: 1_000, requestMs: 5_000 },
    });
    const target = new URL(url);
    const elapsedMs = await new Promise<number>((resolve, reject) => {
      let drip: NodeJS.Timeout | undefined;
      let start = 0;
      const socket = connect(
        { host: target.hostname, port: Number(target.port), ca: [pairs.a.pem] },
        () => {
          start = performance.now();
          socket.write(`POST /mcp HTTP/1.1\r\nHost: ${target.host}\r\nx-slow: `);
          drip = setInterval(() => socket.write('a'), 50);
        },
      );
      socket.on('error', (error) => (start === 0 ? reject(error) : undefined));
      socket.once('close', () => {
        clearInterval(drip);
        resolve(performance.now() - start);
      });
    });
    expect(elapsedMs).toBeGreaterThanOrEqual(950); // the head timeout, not an earlier cut
  });
});

describe.skipIf(!hasOpenssl)('unusable certificate files', () => {
  const cases: [string, () => { cert: string; key: string }, RegExp][] = [
    [
      'a missing certificate',
      () => ({ cert: join(dir, 'nope.crt'), key: pairs.a.key }),
      /^http\.tls\.cert: cannot read the TLS certificate file .*nope\.crt: no such file$/,
    ],
    [
      'a key path that is a directory',
      () => ({ cert: pairs.a.cert, key: dir }),
      /^http\.tls\.key: cannot read the TLS private key file .*: is a directory$/,
    ],
    [
      'a certificate that is not PEM',
      () => ({ cert: join(dir, 'garbage.crt'), key: pairs.a.key }),
      /^http\.tls\.cert: .*garbage\.crt is not a PEM certificate/,
    ],
    [
      'a key that belongs to another certificate',
      () => ({ cert: pairs.a.cert, key: pairs.b.key }),
      /^http\.tls\.key: the private key .*b\.key does not belong to the certificate .*a\.crt$/,
    ],
  ];

  it.each(cases)(
    'refuses to start with %s, a ConfigError naming the file',
    async (_what, files, message) => {
      writeFileSync(join(dir, 'garbage.crt'), 'not a certificate\n');
      const reservoir = createReservoir({ providers: [filesProvider({ root: docs })] });
      started.push(reservoir);
      await expect(reservoir.listen({ host: '127.0.0.1', port: 0, tls: files() })).rejects.toThrow(
        message,
      );
    },
  );

  it('makes reservoir serve exit 1 with the reason on stderr, for flags and for a config file', async () => {
    const serve = (args: string[]): Promise<{ code: number; stderr: string }> =>
      run(process.execPath, [
        CLI_PATH,
        'serve',
        '--no-config',
        docs,
        '--http',
        '127.0.0.1:0',
        ...args,
      ]).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    expect(await serve(['--tls-cert', pairs.a.cert])).toEqual({
      code: 1,
      stderr:
        'reservoir: --tls-key: missing: --tls-cert was given, and HTTPS needs the private key too\n',
    });
    expect(await serve(['--tls-key', pairs.a.key])).toEqual({
      code: 1,
      stderr:
        'reservoir: --tls-cert: missing: --tls-key was given, and HTTPS needs the certificate too\n',
    });
    const mismatched = await serve(['--tls-cert', pairs.a.cert, '--tls-key', pairs.b.key]);
    expect(mismatched.code).toBe(1);
    expect(mismatched.stderr).toMatch(
      /^reservoir: http\.tls\.key: the private key .*b\.key does not belong to the certificate .*a\.crt\n$/,
    );
    writeFileSync(
      join(dir, 'bad-tls.yaml'),
      `sources: [{ type: files, root: docs }]\nserver:\n  http: { port: 0, tls: { cert: missing.crt, key: a.key } }\n`,
    );
    const configured = await run(process.execPath, [
      CLI_PATH,
      'serve',
      '--config',
      join(dir, 'bad-tls.yaml'),
    ]).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
    expect(configured.code).toBe(1);
    // Relative paths are resolved against the config file's directory.
    expect(configured.stderr).toContain(
      `cannot read the TLS certificate file ${join(dir, 'missing.crt')}: no such file`,
    );
  });

  it('makes reservoir check refuse the files serve would refuse: missing, and a key of another certificate', async () => {
    const check = (config: string): Promise<{ code: number; stdout: string; stderr: string }> =>
      run(process.execPath, [CLI_PATH, 'check', '--config', join(dir, config)]).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    writeFileSync(
      join(dir, 'check-missing.yaml'),
      `sources: [{ type: files, root: docs }]\nserver:\n  http: { port: 0, tls: { cert: missing.crt, key: a.key } }\n`,
    );
    const missing = await check('check-missing.yaml');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      `http.tls.cert: cannot read the TLS certificate file ${join(dir, 'missing.crt')}: no such file`,
    );
    writeFileSync(
      join(dir, 'check-mismatch.yaml'),
      `sources: [{ type: files, root: docs }]\nserver:\n  http: { port: 0, tls: { cert: a.crt, key: b.key } }\n`,
    );
    const mismatched = await check('check-mismatch.yaml');
    expect(mismatched.code).toBe(1);
    expect(mismatched.stderr).toMatch(/http\.tls\.key: the private key .*b\.key does not belong/);
    writeFileSync(
      join(dir, 'check-good.yaml'),
      `sources: [{ type: files, root: docs }]\nserver:\n  http: { port: 0, tls: { cert: a.crt, key: a.key } }\n`,
    );
    const good = await check('check-good.yaml');
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toContain('valid (1 source');
  });
});

describe.skipIf(!hasOpenssl)('reservoir serve over HTTPS', () => {
  it.each(ERAS)(
    'serves https from --tls-cert/--tls-key and from server.http.tls with paths relative to the config file (%s era)',
    async (era) => {
      const byFlags = await spawnHttpServer(
        [docs],
        ['--no-config', '--tls-cert', pairs.a.cert, '--tls-key', pairs.a.key],
        cleanup,
      );
      expect(byFlags.url).toMatch(/^https:\/\//);
      const viaFlags = await connectHttps(era, byFlags.url, pairs.a.pem);
      expect(
        (await viaFlags.readResource({ uri: `${dirUri(docs)}a.md` })).contents[0],
      ).toMatchObject({ text: 'alpha\n' });

      writeFileSync(
        join(dir, `tls-${era}.yaml`),
        `sources: [{ type: files, root: docs }]\nserver:\n  http: { host: 127.0.0.1, port: 0, tls: { cert: b.crt, key: b.key } }\n`,
      );
      const { stdout } = await run(process.execPath, [
        CLI_PATH,
        'check',
        '--config',
        join(dir, `tls-${era}.yaml`),
      ]);
      expect(stdout).toMatch(
        /: valid \(1 source, 0 prompts; serves https:\/\/127\.0\.0\.1:0\/mcp\)\n$/,
      );
      const byConfig = await spawnHttpServer(
        [],
        ['--config', join(dir, `tls-${era}.yaml`)],
        cleanup,
      );
      expect(await servedFingerprint(byConfig.url, pairs.b.pem)).toBe(pairs.b.fingerprint);
      const viaConfig = await connectHttps(era, byConfig.url, pairs.b.pem);
      expect(
        (await viaConfig.readResource({ uri: `${dirUri(docs)}a.md` })).contents[0],
      ).toMatchObject({ text: 'alpha\n' });
    },
  );
});
