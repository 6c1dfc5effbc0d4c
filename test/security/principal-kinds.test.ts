// Issue 11, item 2: access rules name the principal's kind. A static token and an OAuth subject
// may be the same string ("alice"); a rule for `token:alice` reaches the token only, `oauth:alice`
// the subject only, `token:*` / `oauth:*` every principal of that kind. A bare id is refused, by
// the policy and by the config validator (test/config/broken-configs.test.ts pins its message). Through the real
// SDK client over HTTP with a real JWT, both eras.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy, principalProblem } from '../../src/core/access.js';
import { ConfigError } from '../../src/core/errors.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ERAS, listAllPages } from '../helpers/clients.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { now, startAuthorizationServer, type AuthorizationServer } from '../http/auth-harness.js';
import { closeClient, connectWithToken, makeToken, settle } from './harness.js';

const AUDIENCE = 'https://mcp.example.test/mcp';
const alice = makeToken('alice', []);

let root: string;
let base: string;
let as: AuthorizationServer;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;

beforeAll(async () => {
  root = makeTempDir('reservoir-kinds-');
  writeTree(root, {
    'token/t.md': 'for the token\n',
    'oauth/o.md': 'for the subject\n',
    'any-oauth/a.md': 'for any subject\n',
  });
  base = dirUri(root);
  as = await startAuthorizationServer();
  reservoir = createReservoir({
    providers: [filesProvider({ root })],
    access: new AccessPolicy({
      rules: [
        { principals: ['token:alice'], allow: [`${base}token/**`] },
        { principals: ['oauth:alice'], allow: [`${base}oauth/**`] },
        { principals: ['oauth:*'], allow: [`${base}any-oauth/**`] },
      ],
    }),
  });
  endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: [{ name: alice.name, sha256: alice.sha256, scopes: [] }],
      oauth: { issuer: as.issuer, jwksUri: as.jwksUri, audience: AUDIENCE },
    }),
  });
});

afterAll(async () => {
  await reservoir?.close();
  await as?.close();
  removeTree(root);
});

async function jwt(sub: string): Promise<string> {
  return as.sign({ iss: as.issuer, aud: AUDIENCE, sub, exp: now() + 300, scope: 'mcp' });
}

describe.each(ERAS)('a static token and an OAuth subject both named alice (%s era)', (era) => {
  it('gives the static token only what token:alice rules grant', async () => {
    const client = await connectWithToken(era, endpoint.url, alice.token);
    try {
      const uris = (await listAllPages(client)).flatMap((p) => p.resources.map((r) => r.uri));
      expect(uris).toEqual([`${base}token/t.md`]);
      expect((await settle(client.readResource({ uri: `${base}oauth/o.md` }))).ok).toBe(false);
    } finally {
      await closeClient(client);
    }
  });

  it('gives the OAuth subject alice what oauth:alice and oauth:* grant, and nothing of the token', async () => {
    const client = await connectWithToken(era, endpoint.url, await jwt('alice'));
    try {
      const uris = (await listAllPages(client)).flatMap((p) => p.resources.map((r) => r.uri));
      expect(uris.sort()).toEqual([`${base}any-oauth/a.md`, `${base}oauth/o.md`]);
      expect((await settle(client.readResource({ uri: `${base}token/t.md` }))).ok).toBe(false);
    } finally {
      await closeClient(client);
    }
  });

  it('gives another OAuth subject only what oauth:* grants', async () => {
    const client = await connectWithToken(era, endpoint.url, await jwt('bob'));
    try {
      const uris = (await listAllPages(client)).flatMap((p) => p.resources.map((r) => r.uri));
      expect(uris).toEqual([`${base}any-oauth/a.md`]);
    } finally {
      await closeClient(client);
    }
  });
});

describe('the plain form of a principal in a rule', () => {
  it('accepts *, anonymous, token:NAME, oauth:SUBJECT, token:* and oauth:*', () => {
    for (const entry of [
      '*',
      'anonymous',
      'token:alice',
      'oauth:alice',
      'oauth:auth0|1234:x',
      'token:*',
      'oauth:*',
    ]) {
      expect(principalProblem(entry), entry).toBeUndefined();
    }
  });

  it('refuses a bare id in the policy, saying how to write it', () => {
    expect(() => new AccessPolicy({ rules: [{ principals: ['alice'], allow: ['**'] }] })).toThrow(
      ConfigError,
    );
    expect(
      () =>
        new AccessPolicy({
          rules: [{ allow: ['**'] }, { principals: ['*', 'alice'], allow: ['**'] }],
        }),
    ).toThrow(
      "access.rules[1].principals[1]: 'alice' does not say which kind of principal it is: write token:alice for the static token named alice, oauth:alice for the OAuth subject alice, anonymous, or *",
    );
    expect(() => new AccessPolicy({ rules: [{ principals: ['token:'], allow: ['**'] }] })).toThrow(
      "'token:' names no token: write token:<id>, or token:* for any",
    );
    expect(
      () => new AccessPolicy({ rules: [{ principals: ['user:alice'], allow: ['**'] }] }),
    ).toThrow(/does not say which kind/);
  });
});
