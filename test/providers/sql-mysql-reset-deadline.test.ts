// A MySQL / MariaDB session reset that never answers does not hold its connection forever
// (RESERVOIR_TEST_MYSQL; skipped with a message when unset). The source reaches the server through a
// proxy that forwards everything but COM_RESET_CONNECTION, which it swallows: with a pool of one
// connection, the connection whose reset hangs is closed at the reset's deadline and the next call
// answers on a new one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlProvider, type SqlProvider } from '../../src/providers/sql/index.js';
import { eventually } from '../helpers/eventually.js';
import { hostPortOf, TcpProxy } from '../helpers/tcp-proxy.js';
import { MYSQL_URL, mysqlConfigured } from './sql-helpers.js';

/** COM_RESET_CONNECTION, the command byte of the packet that asks for a session reset. */
const COM_RESET_CONNECTION = 0x1f;

/** A proxy to the server that drops every COM_RESET_CONNECTION packet a client sends. */
class ResetSwallowingProxy extends TcpProxy {
  swallowed = 0;

  constructor(target: { host: string; port: number }) {
    super(target.host, target.port, {
      clientFilter: () => {
        // client → server, packet by packet (3-byte length, sequence id, payload)
        let pending = Buffer.alloc(0);
        return (chunk, send) => {
          pending = Buffer.concat([pending, chunk]);
          while (pending.length >= 4) {
            const size = pending.readUIntLE(0, 3) + 4;
            if (pending.length < size) break;
            const packet = pending.subarray(0, size);
            pending = pending.subarray(size);
            if (packet[3] === 0 && packet[4] === COM_RESET_CONNECTION) this.swallowed += 1;
            else send(packet);
          }
        };
      },
    });
  }
}

describe.skipIf(!mysqlConfigured())('a MySQL session reset that hangs', () => {
  let proxy: ResetSwallowingProxy;
  let db: SqlProvider;

  beforeAll(async () => {
    proxy = new ResetSwallowingProxy(hostPortOf(MYSQL_URL!));
    await proxy.up();
    const url = new URL(MYSQL_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    db = sqlProvider({
      url: url.href,
      name: 'hung',
      queryTool: true,
      allowPrivilegedRole: true,
      statementTimeoutMs: 500,
      pool: { max: 1 },
    });
  });

  afterAll(async () => {
    await db?.close();
    await proxy?.down();
  });

  it('closes the connection at its deadline, and the next call answers on a new one', async () => {
    expect((await db.query('SELECT 1 AS one')).rows).toEqual([[1]]);
    // the first call's reset never answers; the pool's only connection is freed by closing it
    expect((await db.query('SELECT 2 AS two')).rows).toEqual([[2]]);
    expect(proxy.swallowed).toBeGreaterThanOrEqual(1);
    expect(proxy.connections).toBeGreaterThanOrEqual(2);
  }, 15_000);

  it('lets the source close while a reset hangs', async () => {
    // the reset goes out with the statement (behind it, in one write) or after its answer
    const swallowed = proxy.swallowed;
    await db.query('SELECT 3 AS three');
    await eventually(() => proxy.swallowed > swallowed, 'the reset to be sent');
    await db.close();
    await eventually(() => proxy.open === 0, 'the connection to be closed');
  }, 15_000);
});
