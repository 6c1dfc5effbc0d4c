/**
 * The TLS settings of the HTTPS endpoint, as a careful operator sets them:
 *
 *   - only forward-secret AEAD suites by default: the TLS 1.3 suites, and for TLS 1.2 ECDHE with
 *     AES-GCM or ChaCha20-Poly1305 (no RSA key exchange, no CBC, no SHA-1 MACs, no finite-field
 *     DHE); the server's order wins (`honorCipherOrder`);
 *   - TLS 1.2 at least (1.3 may be required);
 *   - renegotiation refused (`SSL_OP_NO_RENEGOTIATION`): a TLS 1.2 client asking for it gets a
 *     `no_renegotiation` alert, so it cannot be used to make the server do handshakes on demand.
 *
 * `ciphers` replaces the suite list: a `:`-separated list of OpenSSL suite names (TLS 1.2, e.g.
 * `ECDHE-RSA-AES128-GCM-SHA256`) and TLS 1.3 names (`TLS_AES_128_GCM_SHA256`). Each name must be
 * one this Node's OpenSSL knows (a name it does not know would be dropped silently), and the list
 * must allow a suite for the lowest version served. OpenSSL keywords (`HIGH`, `!aNULL`) are not
 * taken: the operator writes the suites served.
 */
import { constants } from 'node:crypto';
import { getCiphers } from 'node:tls';
import { ConfigError } from '../core/errors.js';

export type TlsVersion = 'TLSv1.2' | 'TLSv1.3';

export interface TlsPolicy {
  /** Suites served, `:`-separated. @default DEFAULT_CIPHERS */
  ciphers?: string | undefined;
  /** Lowest TLS version served. @default 'TLSv1.2' */
  minVersion?: TlsVersion | undefined;
}

/** TLS 1.3 suites, then ECDHE + AEAD for TLS 1.2, strongest first. */
export const DEFAULT_CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
].join(':');

/** What node:tls is given, at start-up and on every certificate reload (which forgets what it is not told). */
export interface TlsServerSettings {
  ciphers: string;
  minVersion: TlsVersion;
  honorCipherOrder: true;
  secureOptions: number;
}

/** Checks `policy` and returns the server settings; throws ConfigError (`http.tls.ciphers` / `.minVersion`). */
export function tlsServerSettings(policy: TlsPolicy = {}): TlsServerSettings {
  const minVersion = policy.minVersion ?? 'TLSv1.2';
  if (minVersion !== 'TLSv1.2' && minVersion !== 'TLSv1.3') {
    throw new ConfigError(
      'http.tls.minVersion',
      `expected 'TLSv1.2' or 'TLSv1.3', got '${String(minVersion)}'`,
    );
  }
  const ciphers =
    policy.ciphers === undefined ? DEFAULT_CIPHERS : checkCiphers(policy.ciphers, minVersion);
  return {
    ciphers,
    minVersion,
    honorCipherOrder: true,
    secureOptions: constants.SSL_OP_NO_RENEGOTIATION,
  };
}

function checkCiphers(list: string, minVersion: TlsVersion): string {
  const names = list.split(':').map((name) => name.trim().toUpperCase());
  if (names.length === 0 || names.some((name) => name === '')) {
    throw new ConfigError(
      'http.tls.ciphers',
      "expected suite names separated by ':' (e.g. TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256), with none empty",
    );
  }
  const known = new Set(getCiphers());
  const unknown = names.filter((name) => !known.has(name.toLowerCase()));
  if (unknown.length > 0) {
    throw new ConfigError(
      'http.tls.ciphers',
      `unknown cipher suite ${unknown.map((name) => `'${name}'`).join(', ')}: expected OpenSSL suite names (ECDHE-RSA-AES128-GCM-SHA256) or TLS 1.3 names (TLS_AES_128_GCM_SHA256); keywords such as HIGH or !aNULL are not taken`,
      { unknown },
    );
  }
  const tls13 = names.filter((name) => name.startsWith('TLS_'));
  if (tls13.length === 0 && minVersion === 'TLSv1.3') {
    throw new ConfigError(
      'http.tls.ciphers',
      'no TLS 1.3 suite (TLS_…) is listed, and minVersion is TLSv1.3: no client could connect',
    );
  }
  if (tls13.length === names.length && minVersion === 'TLSv1.2') {
    throw new ConfigError(
      'http.tls.ciphers',
      "only TLS 1.3 suites are listed: add TLS 1.2 suites, or set minVersion: 'TLSv1.3'",
    );
  }
  return names.join(':');
}
