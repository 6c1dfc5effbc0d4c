/**
 * The certificate and key files of an HTTPS endpoint. They are read and checked at start-up (a
 * missing file, a file that is not PEM, or a key that does not match the certificate is a
 * ConfigError naming the file), and read again when either changes on disk, so a renewed
 * certificate is served without a restart. The check is a `stat` of both files when a connection
 * arrives — microseconds beside a TLS handshake — so the first connection after a swap is already
 * served with the new certificate.
 *
 * A pair that does not load (garbage, a key of another certificate, a swap caught half-way) is read
 * once per change of the files — their fingerprint: device, inode, size, mtime, ctime — and logged
 * once; the last good pair keeps being served, and handshakes in between cost only the `stat`.
 */
import { readFileSync, statSync, type Stats } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { TlsPolicy } from './tls-policy.js';

export interface TlsFiles {
  /** Path of the PEM certificate (chain: the server's certificate first). */
  cert: string;
  /** Path of the PEM private key. */
  key: string;
}

/** The files and the policy of an HTTPS endpoint (see tls-policy.ts for ciphers and versions). */
export interface TlsOptions extends TlsFiles, TlsPolicy {}

export interface KeyPair {
  cert: Buffer;
  key: Buffer;
}

export class CertificateFiles {
  private seen: string;

  constructor(
    private readonly files: TlsFiles,
    private readonly logger: Logger,
  ) {
    this.seen = '';
  }

  /** Reads and checks both files; throws ConfigError (`http.tls.cert` / `http.tls.key`) when unusable. */
  initial(): KeyPair {
    // Taken before reading, so a change made while reading is seen on the next connection. A file
    // that cannot be stat'ed fails in readPem just below, with the reason.
    let signature = '';
    try {
      signature = this.signature();
    } catch {
      // reported by readPem
    }
    const pair = { cert: readPem(this.files.cert, 'cert'), key: readPem(this.files.key, 'key') };
    check(pair, this.files);
    this.seen = signature;
    return pair;
  }

  /**
   * The new pair when a file changed since the last one was read, else undefined. A pair that does
   * not load (a swap caught half-way: new certificate, old key) is logged once and skipped; the
   * previous pair stays in use, and the files are read again only when they change again.
   */
  changed(): KeyPair | undefined {
    let signature: string;
    try {
      signature = this.signature();
    } catch (error) {
      if (this.seen !== 'missing')
        this.logger.warn(
          { err: error },
          'TLS certificate files cannot be read; still serving the previous certificate',
        );
      this.seen = 'missing';
      return undefined;
    }
    if (signature === this.seen) return undefined;
    try {
      const pair = this.initial();
      this.logger.info(
        { cert: this.files.cert },
        'TLS certificate files changed: serving the new certificate',
      );
      return pair;
    } catch (error) {
      // This version of the files is not read again: the next change (a new fingerprint) is.
      this.seen = signature;
      this.logger.warn(
        { err: error },
        'TLS certificate files changed but do not load; still serving the previous certificate',
      );
      return undefined;
    }
  }

  /** Identity and version of both files: a write, a rename over either, or a new inode changes it. */
  private signature(): string {
    return [statSync(this.files.cert), statSync(this.files.key)].map(version).join('|');
  }
}

function version(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

function readPem(path: string, field: 'cert' | 'key'): Buffer {
  const what = field === 'cert' ? 'certificate' : 'private key';
  let data: Buffer;
  try {
    data = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (code ?? String(error));
    throw new ConfigError(
      `http.tls.${field}`,
      `cannot read the TLS ${what} file ${path}: ${reason}`,
      { path },
    );
  }
  const label =
    field === 'cert' ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/;
  if (!label.test(data.toString('latin1'))) {
    throw new ConfigError(
      `http.tls.${field}`,
      `${path} is not a PEM ${what} (expected a "-----BEGIN ${field === 'cert' ? 'CERTIFICATE' : 'PRIVATE KEY'}-----" block)`,
      { path },
    );
  }
  return data;
}

/** OpenSSL's own check: the certificate parses and the key belongs to it. */
function check(pair: KeyPair, files: TlsFiles): void {
  try {
    createSecureContext(pair);
  } catch (error) {
    const reason = (error as { reason?: unknown }).reason ?? (error as Error).message;
    const code = (error as { code?: unknown }).code;
    const mismatch =
      code === 'ERR_OSSL_X509_KEY_VALUES_MISMATCH' || /key values mismatch/i.test(String(reason));
    throw new ConfigError(
      mismatch ? 'http.tls.key' : 'http.tls.cert',
      mismatch
        ? `the private key ${files.key} does not belong to the certificate ${files.cert}`
        : `cannot use the TLS certificate ${files.cert} with the key ${files.key}: ${String(reason)}`,
      { path: mismatch ? files.key : files.cert },
    );
  }
}
