// Requests refused by authentication are visible and bounded, over a real socket in front of the real
// endpoint: each 401/403/400 is an audit record (`http/authenticate`, the credential kind presented,
// the reason, the client's address — never the token) and a `/metrics` counter by status and reason;
// an address refused `failures` times in a window is answered 429 with Retry-After — even with a
// valid token — until the window has passed; a token that is accepted is never counted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/http/auth.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { makeToken } from '../security/harness.js';

const ops = makeToken('ops', []);
const WRONG = 'wrong-token-0123456789-0123456789-0123456789';
let dir: string;
let reservoir: Reservoir;
let origin: string;

beforeAll(async () => {
  dir = makeTempDir('reservoir-auth-failures-');
  writeTree(dir, { 'docs/a.md': '# a\n' });
  reservoir = createReservoir({
    providers: [filesProvider({ root: join(dir, 'docs') })],
    policy: { audit: { sink: 'file', path: join(dir, 'audit.log'), flushIntervalMs: 60_000 } },
  });
  const auth = createAuthenticator({
    tokens: [{ name: ops.name, sha256: ops.sha256, scopes: ops.scopes }],
  });
  origin = new URL(
    (
      await reservoir.listen({
        host: '127.0.0.1',
        port: 0,
        auth,
        authFailureLimit: { failures: 5, windowMs: 600_000 },
      })
    ).url,
  ).origin;
});

afterAll(async () => {
  await reservoir.close();
  removeTree(dir);
});

const post = (authorization?: string): Promise<Response> =>
  fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });

describe('requests refused by authentication', () => {
  it('are audited and counted without the token, and an address that keeps failing is answered 429 until its window passes', async () => {
    // A valid token is never counted.
    expect((await post(`Bearer ${ops.token}`)).status).not.toBe(401);
    expect((await post()).status).toBe(401);
    expect((await post(`Bearer ${WRONG}`)).status).toBe(401);
    expect((await post('Bearer')).status).toBe(400);
    expect((await post('Basic b3BzOm9wcw==')).status).toBe(401);
    const metrics = await (
      await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${ops.token}` } })
    ).text();
    expect(metrics).toMatch(
      /^reservoir_auth_failures_total\{status="401",reason="missing_token"\} 2$/m,
    );
    expect(metrics).toMatch(
      /^reservoir_auth_failures_total\{status="401",reason="invalid_token"\} 1$/m,
    );
    expect(metrics).toMatch(
      /^reservoir_auth_failures_total\{status="400",reason="invalid_request"\} 1$/m,
    );
    expect((await post(`Bearer ${WRONG}`)).status).toBe(401);
    // Over the limit now: refused before any credential is looked at, a valid token too.
    for (const authorization of [`Bearer ${WRONG}`, `Bearer ${ops.token}`, undefined]) {
      const refused = await post(authorization);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { error: string }).error).toBe('too_many_failures');
    }
    await reservoir.close();
    const records = readFileSync(join(dir, 'audit.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => record['method'] === 'http/authenticate');
    expect(records.map((r) => [r['principalKind'], r['code']])).toEqual([
      ['none', 'missing_token'],
      ['bearer', 'invalid_token'],
      ['bearer', 'invalid_request'],
      ['basic', 'missing_token'],
      ['bearer', 'invalid_token'],
      ['bearer', 'too_many_failures'],
      ['bearer', 'too_many_failures'],
      ['none', 'too_many_failures'],
    ]);
    for (const record of records) {
      expect(record['address']).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
      expect(record['principal']).toBe('unauthenticated');
    }
    const log = readFileSync(join(dir, 'audit.log'), 'utf8');
    expect(log).not.toContain(WRONG);
    expect(log).not.toContain(ops.token);
  });
});
