// Issue 24, item 10: TLS as a careful operator sets it. Over real TLS sockets to a listening
// Reservoir: only forward-secret AEAD suites by default (TLS 1.3, TLS 1.2 ECDHE + GCM/ChaCha20, in
// the server's order), TLS 1.0/1.1 refused; `ciphers` and `minVersion` override them, and a bad
// list is a clear config error; client-initiated renegotiation is refused; the policy survives a
// certificate reload; and a broken pair on disk is read once per change, logged once, while the last
// good pair keeps being served.
import { copyFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type ConnectionOptions } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import type { Logger } from '../../src/core/log.js';
import { parseConfig } from '../../src/config/load.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import type { TlsOptions } from '../../src/http/tls.js';
import { hasOpenssl, makeCertificate, type CertificatePair } from '../helpers/certificate.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

let dir: string;
let docs: string;
const pairs = {} as Record<'a' | 'b', CertificatePair>;
const started: Reservoir[] = [];

beforeAll(async () => {
  dir = makeTempDir('reservoir-tls-policy-');
  docs = join(dir, 'docs');
  writeTree(docs, { 'a.md': 'alpha\n' });
  if (!hasOpenssl) return;
  pairs.a = await makeCertificate(dir, 'a');
  pairs.b = await makeCertificate(dir, 'b');
});
afterAll(async () => {
  await Promise.allSettled(started.map((r) => r.close()));
  removeTree(dir);
});

/** A logger that keeps what it is told. */
function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (fields: unknown, message?: string) =>
    void lines.push({ level, message: typeof fields === 'string' ? fields : (message ?? '') });
  return { lines, error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

async function serve(tls: TlsOptions, logger?: Logger): Promise<number> {
  const reservoir = createReservoir({
    providers: [filesProvider({ root: docs })],
    ...(logger === undefined ? {} : { logger }),
  });
  started.push(reservoir);
  const { url } = await reservoir.listen({ host: '127.0.0.1', port: 0, tls });
  return Number(new URL(url).port);
}

interface Handshake {
  protocol: string | null;
  cipher: string;
  fingerprint: string;
}

/** One TLS handshake with `options`; its outcome, or the error that ended it. */
function handshake(port: number, options: ConnectionOptions = {}): Promise<Handshake | Error> {
  return new Promise((resolve) => {
    const socket = connect(
      { host: '127.0.0.1', port, ca: [pairs.a.pem, pairs.b.pem], ...options },
      () => {
        const outcome = {
          protocol: socket.getProtocol(),
          cipher: socket.getCipher().standardName,
          fingerprint: socket.getPeerCertificate().fingerprint256,
        };
        socket.end();
        resolve(outcome);
      },
    );
    socket.once('error', resolve);
  });
}

/** Asks for a TLS 1.2 renegotiation; the error it ends with, or 'renegotiated'. */
function renegotiate(port: number): Promise<Error | 'renegotiated'> {
  return new Promise((resolve) => {
    const socket = connect(
      { host: '127.0.0.1', port, ca: [pairs.a.pem, pairs.b.pem], maxVersion: 'TLSv1.2' },
      () => {
        const asked = socket.renegotiate({ rejectUnauthorized: true }, (error) => {
          socket.destroy();
          resolve(error ?? 'renegotiated');
        });
        if (!asked) resolve(new Error('renegotiate() refused locally'));
      },
    );
    socket.once('error', (error) => {
      socket.destroy();
      resolve(error);
    });
  });
}

/** Replaces `target` by a copy of `source` the way deploy tools do: write aside, rename over. */
function swapIn(source: string | Buffer, target: string): void {
  if (typeof source === 'string') copyFileSync(source, `${target}.new`);
  else writeFileSync(`${target}.new`, source);
  renameSync(`${target}.new`, target);
}

const FORWARD_SECRET_AEAD =
  /^TLS_(?:AES_(?:128|256)_GCM_SHA(?:256|384)|CHACHA20_POLY1305_SHA256|ECDHE_(?:ECDSA|RSA)_WITH_(?:AES_(?:128|256)_GCM_SHA(?:256|384)|CHACHA20_POLY1305_SHA256))$/;

describe.skipIf(!hasOpenssl)('TLS policy: defaults', () => {
  let port: number;
  beforeAll(async () => {
    port = await serve({ cert: pairs.a.cert, key: pairs.a.key });
  });

  it('negotiates TLS 1.3, and TLS 1.2 with ECDHE and an AEAD suite', async () => {
    expect(await handshake(port)).toMatchObject({
      protocol: 'TLSv1.3',
      cipher: expect.stringMatching(FORWARD_SECRET_AEAD),
    });
    for (const suite of [
      'ECDHE-ECDSA-AES128-GCM-SHA256',
      'ECDHE-ECDSA-AES256-GCM-SHA384',
      'ECDHE-ECDSA-CHACHA20-POLY1305',
    ]) {
      const outcome = await handshake(port, { maxVersion: 'TLSv1.2', ciphers: suite });
      expect(outcome, suite).toMatchObject({
        protocol: 'TLSv1.2',
        cipher: expect.stringMatching(FORWARD_SECRET_AEAD),
      });
    }
  });

  it('refuses TLS 1.2 clients that offer only CBC or SHA-1 suites, and TLS 1.0/1.1 clients', async () => {
    for (const suite of [
      'ECDHE-ECDSA-AES128-SHA',
      'ECDHE-ECDSA-AES256-SHA',
      'ECDHE-ECDSA-AES128-SHA256',
      'ECDHE-ECDSA-AES256-SHA384',
    ]) {
      const outcome = await handshake(port, { maxVersion: 'TLSv1.2', ciphers: suite });
      expect(outcome, suite).toBeInstanceOf(Error);
      expect((outcome as Error).message, suite).toMatch(/handshake failure|no shared cipher/i);
    }
    for (const version of ['TLSv1', 'TLSv1.1'] as const) {
      const outcome = await handshake(port, {
        minVersion: version,
        maxVersion: version,
        ciphers: 'DEFAULT@SECLEVEL=0',
      });
      expect(outcome, version).toBeInstanceOf(Error);
    }
  });

  it("chooses by the server's order, not the client's", async () => {
    const outcome = await handshake(port, {
      maxVersion: 'TLSv1.2',
      ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384',
    });
    expect(outcome).toMatchObject({ cipher: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384' });
  });

  it('refuses a client-initiated renegotiation and keeps serving', async () => {
    const outcome = await renegotiate(port);
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toMatch(/renegotiation/i);
    expect(await handshake(port)).toMatchObject({ protocol: 'TLSv1.3' });
  });
});

describe.skipIf(!hasOpenssl)('TLS policy: configured', () => {
  it('serves only the configured suites and versions, before and after a certificate reload', async () => {
    const cert = join(dir, 'policy.crt');
    const key = join(dir, 'policy.key');
    copyFileSync(pairs.a.cert, cert);
    copyFileSync(pairs.a.key, key);
    const port = await serve({
      cert,
      key,
      ciphers: 'TLS_CHACHA20_POLY1305_SHA256:ECDHE-ECDSA-AES128-GCM-SHA256',
    });
    const check = async (fingerprint: string): Promise<void> => {
      expect(await handshake(port)).toMatchObject({
        protocol: 'TLSv1.3',
        cipher: 'TLS_CHACHA20_POLY1305_SHA256',
        fingerprint,
      });
      expect(
        await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384' }),
      ).toBeInstanceOf(Error);
      expect(
        await handshake(port, {
          maxVersion: 'TLSv1.2',
          ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256',
        }),
      ).toMatchObject({
        cipher: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
      });
      expect(await renegotiate(port)).toBeInstanceOf(Error);
    };
    await check(pairs.a.fingerprint);
    swapIn(pairs.b.cert, cert);
    swapIn(pairs.b.key, key);
    await check(pairs.b.fingerprint);
  });

  it('serves TLS 1.3 only when minVersion says so', async () => {
    const port = await serve({ cert: pairs.a.cert, key: pairs.a.key, minVersion: 'TLSv1.3' });
    expect(await handshake(port)).toMatchObject({ protocol: 'TLSv1.3' });
    expect(await handshake(port, { maxVersion: 'TLSv1.2' })).toBeInstanceOf(Error);
  });

  it.each([
    [
      'an unknown suite',
      'ECDHE-ECDSA-AES128-GCM-SHA256:NOT-A-CIPHER',
      /^http\.tls\.ciphers: unknown cipher suite 'NOT-A-CIPHER'/,
    ],
    [
      'an OpenSSL keyword',
      'HIGH:!aNULL',
      /^http\.tls\.ciphers: unknown cipher suite 'HIGH', '!ANULL'/,
    ],
    [
      'an empty entry',
      'ECDHE-ECDSA-AES128-GCM-SHA256::',
      /^http\.tls\.ciphers: expected suite names separated by ':'/,
    ],
    [
      'only TLS 1.3 suites while TLS 1.2 is served',
      'TLS_AES_128_GCM_SHA256',
      /^http\.tls\.ciphers: only TLS 1\.3 suites are listed/,
    ],
  ])(
    'refuses %s as a clear config error, from the library and from a config file',
    async (_what, ciphers, message) => {
      const reservoir = createReservoir({ providers: [filesProvider({ root: docs })] });
      started.push(reservoir);
      const refused = await reservoir
        .listen({
          host: '127.0.0.1',
          port: 0,
          tls: { cert: pairs.a.cert, key: pairs.a.key, ciphers },
        })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as Error).message).toMatch(message);
      const yaml = `sources: [{ type: files, root: docs }]\nserver:\n  http: { port: 0, tls: { cert: a.crt, key: a.key, ciphers: '${ciphers}' } }\n`;
      expect(() => parseConfig(yaml, { file: join(dir, 'reservoir.yaml') })).toThrow(
        /http\.tls\.ciphers/,
      );
    },
  );
});

describe.skipIf(!hasOpenssl)('a broken certificate pair on disk', () => {
  it('is read once per change and logged once, while the last good pair is served', async () => {
    const cert = join(dir, 'broken.crt');
    const key = join(dir, 'broken.key');
    copyFileSync(pairs.a.cert, cert);
    copyFileSync(pairs.a.key, key);
    const logger = recordingLogger();
    const port = await serve({ cert, key }, logger);
    const refusals = () =>
      logger.lines.filter((l) => l.level === 'warn' && /do not load/.test(l.message)).length;

    swapIn(Buffer.from('not a certificate\n'), cert); // garbage
    for (let i = 0; i < 5; i += 1)
      expect(await handshake(port)).toMatchObject({ fingerprint: pairs.a.fingerprint });
    expect(refusals()).toBe(1);

    swapIn(pairs.b.cert, cert); // the new certificate beside the old key: a mismatched pair
    for (let i = 0; i < 5; i += 1)
      expect(await handshake(port)).toMatchObject({ fingerprint: pairs.a.fingerprint });
    expect(refusals()).toBe(2);

    swapIn(pairs.b.key, key); // the swap completes
    expect(await handshake(port)).toMatchObject({ fingerprint: pairs.b.fingerprint });
    for (let i = 0; i < 3; i += 1)
      expect(await handshake(port)).toMatchObject({ fingerprint: pairs.b.fingerprint });
    expect(refusals()).toBe(2);
    expect(logger.lines.filter((l) => /serving the new certificate/.test(l.message))).toHaveLength(
      1,
    );
  });
});
