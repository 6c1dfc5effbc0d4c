// A hung upstream never hangs a request, end to end through the real SDK client over HTTP: an S3
// endpoint and an HTTP API that accept the TCP connection and never answer, and a PostgreSQL whose
// connection stops forwarding (a TCP proxy this test stalls; the shared PostgreSQL is never
// touched). Each read is answered with a clear error — by the source's own timeout, or by the
// request's deadline when that comes first — and the PostgreSQL source answers again once the
// network forwards again. The bounds are set small here; answers are awaited with a generous cap.
import { createServer, type Server, type Socket } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpProvider } from '../../src/providers/http/index.js';
import { s3Provider } from '../../src/providers/s3/index.js';
import { sqlProvider } from '../../src/providers/sql/index.js';
import type { Provider } from '../../src/core/types.js';
import { createReservoir } from '../../src/server/index.js';
import { Cleanup, connectHttp } from '../helpers/clients.js';
import { hostPortOf, TcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { PG_URL } from '../providers/sql-helpers.js';
import { eventually } from '../helpers/eventually.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());
const ANSWER_CAP_MS = 10_000;

/** A server that accepts every connection and never sends a byte. */
async function blackHole(): Promise<{ origin: string; accepted: () => number }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.add(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    accepted: () => accepted,
  };
}

async function serve(provider: Provider, deadlineMs: number): Promise<Client> {
  const reservoir = createReservoir({ providers: [provider], policy: { deadlineMs } });
  cleanup.add(() => reservoir.close());
  const endpoint = await reservoir.listen({ port: 0 });
  return (await connectHttp('2026', endpoint.url, cleanup)).client;
}

/** The error a read ends with; fails the test if the read succeeds or is still pending after the cap. */
async function readError(
  client: Client,
  uri: string,
): Promise<Error & { code?: number; data?: Record<string, unknown> }> {
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(
        () => reject(new Error(`no answer within ${ANSWER_CAP_MS} ms: ${uri}`)),
        ANSWER_CAP_MS,
      )),
  );
  try {
    return await Promise.race([
      client.readResource({ uri }).then(
        () => {
          throw new Error(`expected ${uri} to fail`);
        },
        (error: unknown) => error as Error,
      ),
      cap,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('an upstream that accepts the connection and never answers', () => {
  const s3 = (origin: string, timeoutMs: number): Provider =>
    s3Provider({
      bucket: 'hung-bucket',
      endpoint: origin,
      forcePathStyle: true,
      allowPrivateNetworks: true,
      accessKeyId: 'k',
      secretAccessKey: 's',
      timeoutMs,
    });

  it('S3: answers a read with a clear error at the source timeout', async () => {
    const hole = await blackHole();
    const client = await serve(s3(hole.origin, 200), 30_000);
    const error = await readError(client, 's3://hung-bucket/notes/a.txt');
    expect(hole.accepted()).toBeGreaterThan(0);
    expect(error.message).toMatch(/s3:\/\/hung-bucket\/notes\/a\.txt/);
    expect(error.message).toMatch(/S3 did not answer within the source's timeoutMs/);
    expect(error.data).toMatchObject({ code: 'unavailable', uri: 's3://hung-bucket/notes/a.txt' });
  });

  it('S3: answers a read at the request deadline when that comes before the source timeout', async () => {
    const hole = await blackHole();
    const client = await serve(s3(hole.origin, 600_000), 300);
    const error = await readError(client, 's3://hung-bucket/notes/a.txt');
    expect(error.message).toMatch(/timed out after 300 ms/);
    expect(error.data).toMatchObject({ limitMs: 300 });
  });

  it('HTTP API: answers a read with a clear error at the source timeout, and at the request deadline when that comes first', async () => {
    const hole = await blackHole();
    const api = (timeoutMs: number): Provider =>
      httpProvider({
        name: 'hung',
        baseUrl: `${hole.origin}/`,
        allowPrivateNetworks: true,
        endpoints: [{ name: 'status', uri: 'status', upstream: 'status' }],
        timeoutMs,
      });
    const bySource = await readError(await serve(api(200), 30_000), 'api://hung/status');
    expect(bySource.message).toMatch(/did not answer within 200 ms/);
    const byDeadline = await readError(await serve(api(600_000), 300), 'api://hung/status');
    expect(byDeadline.data).toMatchObject({ limitMs: 300 });
  });
});

describe.skipIf(PG_URL === undefined || PG_URL === '')(
  'a PostgreSQL connection that stops answering',
  () => {
    const schema = `hung_${process.pid}_${Date.now().toString(36)}`;
    let admin: pg.Client;
    let proxy: TcpProxy;

    beforeAll(async () => {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.stock (id int PRIMARY KEY, label text); INSERT INTO ${schema}.stock VALUES (1, 'bolt')`,
      );
      const target = hostPortOf(PG_URL!);
      proxy = new TcpProxy(target.host, target.port);
      await proxy.up();
    });

    afterAll(async () => {
      proxy?.resume();
      await proxy?.down();
      await admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
      await admin?.end();
    });

    it('answers reads with a clear error within the request deadline while the network holds everything back, on open connections and new ones, and reads again once it forwards', async () => {
      const provider = sqlProvider({
        url: throughProxy(PG_URL!, proxy),
        name: 'hung',
        schema,
        statementTimeoutMs: 60_000,
      });
      const client = await serve(provider, 1_000);
      const uri = 'db://hung/tables/stock/rows';
      // The first read connects, checks the role and reads the schema within the 1 s deadline: on a
      // loaded machine it may not, so the pool is warmed by reading until a read is answered.
      await eventually(
        async () => JSON.stringify((await client.readResource({ uri })).contents).includes('bolt'),
        'a read through the forwarding proxy',
      );

      proxy.stall();
      // The first read meets a pooled connection that stopped answering; the next ones need new ones.
      for (let i = 0; i < 3; i += 1) {
        const error = await readError(client, uri);
        expect(error.message).toMatch(/timed out after 1000 ms|unavailable/i);
      }

      proxy.resume();
      const answered = await eventually(
        async () => JSON.stringify((await client.readResource({ uri })).contents),
        'a read to answer once the upstream resumed',
        { deadlineMs: 20_000, stepMs: 100 },
      );
      expect(answered).toContain('bolt');
    });
  },
);
