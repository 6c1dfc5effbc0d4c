/** Self-signed certificates made at test time with openssl (Debian's; tests that need one skip without it). */
import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Whether `openssl` can be run here. */
export const hasOpenssl = ((): boolean => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export interface CertificatePair {
  /** Paths of the PEM certificate and key. */
  cert: string;
  key: string;
  /** The certificate's PEM text, for a client to trust. */
  pem: string;
  fingerprint: string;
}

/**
 * A self-signed P-256 certificate for 127.0.0.1 and localhost, valid one day, written with its key
 * as `<dir>/<name>.crt` and `<dir>/<name>.key`.
 */
export async function makeCertificate(dir: string, name: string): Promise<CertificatePair> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=reservoir-test-${name}`,
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  const pem = readFileSync(cert, 'utf8');
  return { cert, key, pem, fingerprint: new X509Certificate(pem).fingerprint256 };
}
