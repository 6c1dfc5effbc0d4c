/** Self-signed certificates made at test time with openssl (Debian's, on every machine here). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Writes a self-signed P-256 certificate for 127.0.0.1 and localhost, valid one day, and its key. */
export async function makeCertificate(cert: string, key: string, name: string): Promise<void> {
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
}
