// Pins the HTTP provider end to end through the real SDK client over in-process stdio, in both
// protocol eras: fixed endpoints are listed and templates offered, JSON and binary read back exactly,
// a template URI with hostile values reaches the upstream encoded in one segment, completion offers
// the configured values, upstream 404 / 503 arrive as resource-not-found / unavailable (with the
// status in error.data), and a subscribed resource gets `updated` when the upstream body changes.
import { randomBytes } from 'node:crypto';
import { ResourceNotFoundError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpProvider } from '../../src/providers/http/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { ERAS } from '../helpers/clients.js';
import {
  connectInProcess,
  Recorder,
  watchUris,
  waitFor,
  type InProcessStdio,
} from '../subscriptions/harness.js';
import { json, respond, Upstream } from '../providers/http-upstream.js';

const PNG = randomBytes(2048);

let upstream: Upstream;
let version = 1;

beforeAll(async () => {
  upstream = await Upstream.start();
  upstream
    .route('/status', json({ ok: true }, { 'cache-control': 'max-age=0', etag: '"s"' }))
    .route('/logo', respond(PNG, 'image/png'))
    .route('/down', respond('maintenance', 'text/plain', {}, 503))
    .route('/live', (req, res) => {
      const etag = `"${version}"`;
      if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
      res.writeHead(200, { 'content-type': 'text/plain', etag }).end(`version ${version}`);
    })
    .otherwise(
      (req, res) =>
        void res
          .writeHead(/^\/users\/[^/]+$/.test(req.url ?? '') ? 200 : 404, {
            'content-type': 'application/json',
          })
          .end(JSON.stringify({ path: req.url })),
    );
});
afterAll(async () => {
  await upstream.close();
});

describe.each(ERAS)('http provider over stdio, %s era', (era) => {
  let reservoir: Reservoir;
  let connection: InProcessStdio;

  beforeAll(async () => {
    reservoir = createReservoir({
      providers: [
        httpProvider({
          name: 'svc',
          baseUrl: upstream.origin,
          allowPrivateNetworks: true,
          headers: { Authorization: 'Bearer e2e-secret' },
          pollMs: 50,
          endpoints: [
            { name: 'status', uri: 'status', upstream: 'status', description: 'Service status' },
            { name: 'logo', uri: 'logo.png', upstream: 'logo' },
            { name: 'down', uri: 'down', upstream: 'down' },
            { name: 'live', uri: 'live', upstream: 'live' },
            { name: 'gone', uri: 'gone', upstream: 'nothing/here' },
            {
              name: 'user',
              uri: 'users/{login}',
              upstream: 'users/{login}',
              complete: { login: ['alice', 'alan', 'bob'] },
            },
          ],
        }),
      ],
    });
    connection = await connectInProcess(reservoir, era);
  });
  afterAll(async () => {
    await connection.close();
    await reservoir.close();
  });

  it('lists fixed endpoints and offers templates', async () => {
    const { resources } = await connection.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      'api://svc/down',
      'api://svc/gone',
      'api://svc/live',
      'api://svc/logo.png',
      'api://svc/status',
    ]);
    const { resourceTemplates } = await connection.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['api://svc/users/{login}']);
  });

  it('reads JSON as text and binary as an exact blob', async () => {
    const status = await connection.client.readResource({ uri: 'api://svc/status' });
    expect(status.contents[0]).toMatchObject({
      uri: 'api://svc/status',
      mimeType: 'application/json',
      text: '{"ok":true}',
    });
    const logo = await connection.client.readResource({ uri: 'api://svc/logo.png' });
    expect(Buffer.from((logo.contents[0] as { blob: string }).blob, 'base64').equals(PNG)).toBe(
      true,
    );
  });

  it('reads a template URI with its value encoded into one upstream segment', async () => {
    const result = await connection.client.readResource({ uri: 'api://svc/users/a..%3Fx%23y%26z' });
    expect(JSON.parse((result.contents[0] as { text: string }).text)).toEqual({
      path: '/users/a..%3Fx%23y%26z',
    });
  });

  it('refuses a path value holding a slash as an invalid argument naming the variable', async () => {
    const refused: unknown = await connection.client
      .readResource({ uri: 'api://svc/users/a%2F..%2F%3Fx%23y' })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: -32602, data: { argument: 'login' } });
  });

  it('completes a template variable from the configured values', async () => {
    const { completion } = await connection.client.complete({
      ref: { type: 'ref/resource', uri: 'api://svc/users/{login}' },
      argument: { name: 'login', value: 'al' },
    });
    expect(completion.values).toEqual(['alan', 'alice']);
  });

  it('answers an upstream 404 as resource-not-found and a 503 as unavailable with the status', async () => {
    // The SDK client surfaces not-found as ResourceNotFoundError (-32602) in both eras.
    const missing: unknown = await connection.client
      .readResource({ uri: 'api://svc/gone' })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ResourceNotFoundError);
    expect(missing).toMatchObject({ code: -32602, data: { uri: 'api://svc/gone' } });
    const down = (await connection.client
      .readResource({ uri: 'api://svc/down' })
      .catch((e: unknown) => e)) as {
      code: number;
      data: Record<string, unknown>;
      message: string;
    };
    expect(down.code).toBe(-32011);
    expect(down.data).toMatchObject({ code: 'unavailable', status: 503, uri: 'api://svc/down' });
    expect(JSON.stringify(down)).not.toContain('e2e-secret');
  });

  it('sends resources/updated when a subscribed resource changes upstream', async () => {
    const recorder = new Recorder(connection.client);
    const watching = await watchUris(connection.client, era, ['api://svc/live']);
    version += 1;
    await waitFor(() => recorder.updates('api://svc/live') >= 1, 'the update notification');
    const read = await connection.client.readResource({ uri: 'api://svc/live' });
    expect((read.contents[0] as { text: string }).text).toBe(`version ${version}`);
    await watching.stop();
    await waitFor(() => reservoir.subscriptions.stats().watches === 0, 'the watch to stop');
  });
});
