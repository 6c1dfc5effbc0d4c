// /readyz over a real socket: without credentials (none, or a token the server does not accept) it
// names no absolute path and no error text — a directory source is `files:<n>`, a failing source
// keeps its public root and failure kind but not its message; an authenticated caller gets the
// roots as mounted and the messages. /healthz says only that the process answers.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/core/errors.js';
import type { Provider } from '../../src/core/types.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { makeToken } from '../security/harness.js';

const ops = makeToken('ops', []);
const HIDDEN_PATH = '/srv/hidden-place/shop.db';
let dir: string;
let reservoir: Reservoir;
let origin: string;

/** A source that cannot answer, with a path in its error's message. */
const broken: Provider = {
  name: 'broken',
  root: 'db://shop/',
  list: () => Promise.reject(new UnavailableError('db://shop/', `cannot open ${HIDDEN_PATH}`)),
  read: () => Promise.reject(new UnavailableError('db://shop/', `cannot open ${HIDDEN_PATH}`)),
  ready: () => Promise.reject(new UnavailableError('db://shop/', `cannot open ${HIDDEN_PATH}`)),
};

beforeAll(async () => {
  dir = makeTempDir('reservoir-readyz-');
  writeTree(dir, { 'docs/a.md': '# a\n' });
  reservoir = createReservoir({ providers: [filesProvider({ root: join(dir, 'docs') }), broken] });
  const auth = createAuthenticator({
    tokens: [{ name: ops.name, sha256: ops.sha256, scopes: ops.scopes }],
  });
  origin = new URL((await reservoir.listen({ host: '127.0.0.1', port: 0, auth })).url).origin;
});

afterAll(async () => {
  await reservoir.close();
  removeTree(dir);
});

async function readyz(authorization?: string): Promise<{ status: number; text: string }> {
  const response = await fetch(
    `${origin}/readyz`,
    authorization === undefined ? {} : { headers: { authorization } },
  );
  return { status: response.status, text: await response.text() };
}

describe('/readyz', () => {
  it('names no absolute path and no error text to a caller without credentials', async () => {
    for (const authorization of [undefined, 'Bearer not-a-token', 'Basic b3BzOm9wcw==']) {
      const answer = await readyz(authorization);
      expect(answer.status, String(authorization)).toBe(503);
      expect(answer.text).not.toContain(dir);
      expect(answer.text).not.toContain('hidden-place');
      expect(answer.text).not.toContain('file://');
      expect(JSON.parse(answer.text)).toEqual({
        status: 'unavailable',
        sources: [
          { source: 'files:1', ready: true },
          { source: 'db://shop/', ready: false, reason: 'unavailable', since: expect.any(String) },
        ],
      });
    }
  });

  it('gives an authenticated caller the roots as mounted and the error messages', async () => {
    const answer = await readyz(`Bearer ${ops.token}`);
    expect(answer.status).toBe(503);
    const body = JSON.parse(answer.text) as { sources: { source: string; message?: string }[] };
    expect(body.sources[0]!.source).toContain(join(dir, 'docs'));
    expect(body.sources[1]!.message).toContain(HIDDEN_PATH);
  });

  it('says only that the process answers on /healthz', async () => {
    const response = await fetch(`${origin}/healthz`);
    expect(await response.json()).toEqual({ status: 'ok' });
  });
});
