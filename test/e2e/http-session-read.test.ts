// A plain resources/read inside a 2025-era HTTP session is answered on the endpoint's own path
// (src/mcp/direct/session.ts), not through the SDK's session transport. Over real sockets it must be
// indistinguishable from the session path's answer — status, content type, session header and body
// — for a read, a missing file, a path outside the root, a malformed URI and a URI the caller's
// access rules deny (a read with an empty `_meta` is not plain: the session path answers it and
// gives the reference). Everything the session path refuses is still refused as before: another
// principal's session id, an unknown one, a protocol version header the session did not negotiate,
// an Accept without JSON, a batch, a request with no session id. A direct read bypasses the session's
// SDK server, so the session itself must cancel it: the client's `notifications/cancelled` for it,
// or the session's DELETE, aborts the read at its provider, and a cancelled read gets no answer (202).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { Cleanup, connectHttp, LEGACY_VERSION } from '../helpers/clients.js';
import { dirUri, fileUri, makeTempDir, removeTree } from '../helpers/tree.js';
import { initializeParams, rawHttp, type RawHttpResponse } from '../helpers/wire.js';
import { makeToken } from '../security/harness.js';
import { memoryProvider } from '../core/fakes.js';
import type { Provider } from '../../src/core/types.js';

const ACCEPT = 'application/json, text/event-stream';
const team = makeToken('team', ['team']);
const other = makeToken('other', ['team']);
const cleanup = new Cleanup();
let root: string;
let url: string;

function headers(
  token: string,
  session: string | undefined,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: ACCEPT,
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': LEGACY_VERSION,
    ...(session === undefined ? {} : { 'mcp-session-id': session }),
    ...extra,
  };
}

async function openSession(token: string, at = url): Promise<string> {
  const response = await rawHttp(at, {
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: initializeParams(),
    }),
  });
  const session = response.headers['mcp-session-id'];
  if (response.status !== 200 || typeof session !== 'string')
    throw new Error(`initialize failed: ${response.status} ${response.body}`);
  const initialized = await rawHttp(at, {
    headers: headers(token, session),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  return session;
}

function read(
  token: string,
  session: string | undefined,
  params: Record<string, unknown>,
  extra: Record<string, string> = {},
  at = url,
): Promise<RawHttpResponse> {
  return rawHttp(at, {
    headers: headers(token, session, extra),
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/read', params }),
  });
}

function shape(response: RawHttpResponse): unknown {
  return {
    status: response.status,
    type: response.headers['content-type'],
    session: response.headers['mcp-session-id'],
    length: response.headers['content-length'],
    body: response.body,
  };
}

/** The signals of reads started, in order, each handed out once. */
class Started {
  private readonly signals: AbortSignal[] = [];
  private waiter: (() => void) | undefined;

  push(signal: AbortSignal): void {
    this.signals.push(signal);
    this.waiter?.();
  }

  async next(): Promise<AbortSignal> {
    while (this.signals.length === 0) await new Promise<void>((resolve) => (this.waiter = resolve));
    return this.signals.shift()!;
  }
}

/** A server over a provider whose `slow` never answers until its read is aborted (`quick` answers at once). */
async function stalledServer(): Promise<{ url: string; started: Started }> {
  const started = new Started();
  const memory = memoryProvider({ root: 'mem://stall/', names: ['slow', 'quick'] });
  const provider: Provider = {
    ...memory,
    read: async (uri, ctx) => {
      if (!uri.endsWith('/slow')) return memory.read(uri, ctx);
      started.push(ctx.signal);
      await new Promise<void>((resolve) =>
        ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      throw ctx.signal.reason;
    },
  };
  const reservoir = createReservoir({ providers: [provider] });
  cleanup.add(() => reservoir.close());
  const tokens = [team].map(({ name, sha256, scopes }) => ({ name, sha256, scopes }));
  return {
    url: (await reservoir.listen({ port: 0, auth: createAuthenticator({ tokens }) })).url,
    started,
  };
}

beforeAll(async () => {
  root = makeTempDir();
  cleanup.add(() => removeTree(root));
  writeFileSync(join(root, 'note.txt'), 'hello\n');
  writeFileSync(join(root, 'ünïcode.txt'), 'wide\n');
  mkdirSync(join(root, 'secret'));
  writeFileSync(join(root, 'secret', 'keys.txt'), 'k\n');
  const access = new AccessPolicy({
    rules: [
      { scopes: ['team'], allow: [`${dirUri(root)}**`], deny: [`${dirUri(root, 'secret')}**`] },
    ],
  });
  const reservoir: Reservoir = createReservoir({
    providers: [await filesProvider({ root })],
    access,
  });
  cleanup.add(() => reservoir.close());
  const tokens = [team, other].map(({ name, sha256, scopes }) => ({ name, sha256, scopes }));
  url = (await reservoir.listen({ port: 0, auth: createAuthenticator({ tokens }) })).url;
});

afterAll(() => cleanup.run());

describe('2025-era session reads answered directly', () => {
  it('answers a read, a missing file, a path outside the root, a malformed URI and a denied one exactly as the session path does', async () => {
    const session = await openSession(team.token);
    const uris = [
      fileUri(root, 'note.txt'),
      fileUri(root, 'ünïcode.txt'),
      fileUri(root, 'missing.txt'),
      'file:///etc/passwd',
      'not a uri',
      fileUri(root, 'secret/keys.txt'),
    ];
    for (const uri of uris) {
      const direct = await read(team.token, session, { uri });
      const sdk = await read(team.token, session, { uri, _meta: {} });
      expect(shape(direct), uri).toEqual(shape(sdk));
      expect(direct.status).toBe(200);
    }
    const ok = JSON.parse(
      (await read(team.token, session, { uri: fileUri(root, 'note.txt') })).body,
    ) as Record<string, unknown>;
    expect(ok).toEqual({
      result: {
        contents: [{ uri: fileUri(root, 'note.txt'), mimeType: 'text/plain', text: 'hello\n' }],
      },
      jsonrpc: '2.0',
      id: 7,
    });
    const denied = JSON.parse(
      (await read(team.token, session, { uri: fileUri(root, 'secret/keys.txt') })).body,
    ) as Record<string, unknown>;
    expect(denied).toMatchObject({
      id: 7,
      error: { code: -32002, data: { uri: fileUri(root, 'secret/keys.txt') } },
    });
    expect(JSON.stringify(denied)).not.toContain('k\\n');
  });

  it("refuses another principal's session id, and an unknown one, with 404 as before", async () => {
    const session = await openSession(team.token);
    const foreign = await read(other.token, session, { uri: fileUri(root, 'note.txt') });
    expect(foreign.status).toBe(404);
    expect(foreign.body).not.toContain('hello');
    const unknown = await read(team.token, '00000000-0000-4000-8000-000000000000', {
      uri: fileUri(root, 'note.txt'),
    });
    expect(unknown.status).toBe(404);
  });

  it('leaves a version header the SDK does not know, an Accept without JSON, a batch and a missing session id to the session path, which refuses them', async () => {
    const session = await openSession(team.token);
    const uri = fileUri(root, 'note.txt');
    const wrongVersion = await read(
      team.token,
      session,
      { uri },
      { 'mcp-protocol-version': '1999-01-01' },
    );
    expect(wrongVersion.status).toBe(400);
    const noJson = await read(team.token, session, { uri }, { accept: 'text/event-stream' });
    expect(noJson.status).toBe(406);
    const batch = await rawHttp(url, {
      headers: headers(team.token, session),
      body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } }]),
    });
    expect(batch.status).toBe(400);
    expect(JSON.parse(batch.body)).toMatchObject({ error: { code: -32600 } });
    const noSession = await read(team.token, undefined, { uri });
    expect(noSession.status).toBe(400);
  });

  it('answers a read under another negotiated revision in the session path, the same way', async () => {
    const session = await openSession(team.token);
    const uri = fileUri(root, 'note.txt');
    const older = await read(
      team.token,
      session,
      { uri },
      { 'mcp-protocol-version': '2025-06-18' },
    );
    const reference = await read(
      team.token,
      session,
      { uri, _meta: {} },
      { 'mcp-protocol-version': '2025-06-18' },
    );
    expect(shape(older)).toEqual(shape(reference));
  });

  it('aborts a read at its provider when the client cancels it, answers the POST 202 with no body, and the session stays usable', async () => {
    const stalled = await stalledServer();
    const session = await openSession(team.token, stalled.url);
    const pending = read(team.token, session, { uri: 'mem://stall/slow' }, {}, stalled.url);
    const signal = await stalled.started.next();
    const cancel = await rawHttp(stalled.url, {
      headers: headers(team.token, session),
      body: JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 7, reason: 'user gave up' },
      }),
    });
    expect(cancel.status).toBe(202);
    const answer = await pending;
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 202, body: '' });
    expect(signal.aborted).toBe(true);
    const after = JSON.parse(
      (await read(team.token, session, { uri: 'mem://stall/quick' }, {}, stalled.url)).body,
    ) as Record<string, unknown>;
    expect(after).toMatchObject({ id: 7, result: { contents: [{ text: 'content of quick' }] } });
  });

  it('aborts the reads running in a session when the session is deleted', async () => {
    const stalled = await stalledServer();
    const session = await openSession(team.token, stalled.url);
    const pending = read(team.token, session, { uri: 'mem://stall/slow' }, {}, stalled.url);
    const signal = await stalled.started.next();
    const deleted = await rawHttp(stalled.url, {
      method: 'DELETE',
      headers: headers(team.token, session),
    });
    expect(deleted.status).toBe(200);
    expect((await pending).status).toBe(202);
    expect(signal.aborted).toBe(true);
  });

  it('serves the real SDK client many reads at once in its session, and the session stays usable', async () => {
    const open = createReservoir({ providers: [await filesProvider({ root })] });
    cleanup.add(() => open.close());
    const openUrl = (await open.listen({ port: 0 })).url;
    const { client } = await connectHttp('2025', openUrl, cleanup);
    const results = await Promise.all(
      Array.from({ length: 30 }, () => client.readResource({ uri: fileUri(root, 'note.txt') })),
    );
    expect(results.every((r) => (r.contents[0] as { text: string }).text === 'hello\n')).toBe(true);
    await expect(client.readResource({ uri: fileUri(root, 'gone.txt') })).rejects.toThrow(
      /not found/i,
    );
    expect((await client.listResources()).resources.length).toBeGreaterThan(0);
  });
});
