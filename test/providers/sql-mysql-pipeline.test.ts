// A MariaDB `sql_query` writes its commands in two batches, each one round trip, and never runs
// the statement before its read-only transaction has begun; a named query or table page seen
// before is one write (RESERVOIR_TEST_MYSQL; skipped with a
// message when unset). The source reaches the server through a proxy that notes each chunk the
// client writes, as packets (3-byte length, sequence id, command byte, text), and that can spoil the
// transaction's start (one letter changed, so the server answers it with a syntax error).
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/log.js';
import { mysqlDialect } from '../../src/providers/sql/mysql.js';
import { hostPortOf, TcpProxy } from '../helpers/tcp-proxy.js';
import { rejection } from './helpers.js';
import { MYSQL_URL, mysqlConfigured } from './sql-helpers.js';

const COM_QUERY = 0x03;
const COM_STMT_PREPARE = 0x16;
const COM_STMT_EXECUTE = 0x17;
const COM_RESET_CONNECTION = 0x1f;
const BEGIN = 'START TRANSACTION READ ONLY';
const LIMITS = { maxRows: 10, timeoutMs: 10_000, maxBytes: 1 << 20 };

/** One client packet: its command byte and, for text commands, its text. */
interface Sent {
  command: number;
  text: string;
}

/** A proxy that records, per chunk the client writes, the packets in it. */
class RecordingProxy extends TcpProxy {
  chunks: Sent[][] = [];
  /** When set, the transaction's start is sent as a statement the server cannot parse. */
  spoilBegin = false;

  constructor(target: { host: string; port: number }) {
    super(target.host, target.port, {
      clientFilter: () => (chunk, send) => {
        // a chunk here is what one write of the client carried (small writes on loopback arrive whole)
        const packets: Sent[] = [];
        for (let at = 0; at + 4 < chunk.length;) {
          const size = chunk.readUIntLE(at, 3);
          const command = chunk[at + 4]!;
          const text = chunk.subarray(at + 5, at + 4 + size).toString('latin1');
          if (this.spoilBegin && command === COM_QUERY && text === BEGIN)
            chunk.write('X', at + 3 + size, 'latin1'); // START TRANSACTION READ ONLX
          packets.push({ command, text });
          at += 4 + size;
        }
        this.chunks.push(packets);
        send(chunk);
      },
    });
  }
}

const suffix = `${process.pid}_${Date.now().toString(36)}`;

describe.skipIf(!mysqlConfigured())('sql_query on MariaDB, pipelined', () => {
  const DB = `sqlpipe_${suffix}`;
  let admin: mysql.Connection;
  let proxy: RecordingProxy;
  let dialect: ReturnType<typeof mysqlDialect>;

  beforeAll(async () => {
    admin = await mysql.createConnection({ uri: MYSQL_URL! });
    await admin.query(`CREATE DATABASE \`${DB}\``);
    await admin.query(`CREATE TABLE \`${DB}\`.t (id INT)`);
    proxy = new RecordingProxy(hostPortOf(MYSQL_URL!));
    await proxy.up();
    const url = new URL(MYSQL_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    url.pathname = `/${DB}`;
    dialect = mysqlDialect({
      url: url.href,
      statementTimeoutMs: 10_000,
      allowPrivilegedRole: true,
      poolMax: 1,
      logger: silentLogger,
    });
  });

  afterAll(async () => {
    await dialect?.close();
    await proxy?.down();
    await admin?.query(`DROP DATABASE IF EXISTS \`${DB}\``);
    await admin?.end();
  });

  /** The chunks the client wrote for `call`, once its deferred session reset has gone out too. */
  const chunksOf = async (call: () => Promise<unknown>): Promise<Sent[][]> => {
    // the connection is prepared, and the previous call's reset done, before counting
    await dialect.namedQuery('SELECT 1', [], LIMITS);
    const from = proxy.chunks.length;
    await call();
    // a named query runs only once the deferred reset has answered: its chunk closes the count
    await dialect.namedQuery('SELECT 2', [], LIMITS);
    const chunks = proxy.chunks.slice(from);
    return chunks.slice(
      0,
      chunks.findIndex((packets) => packets[0]?.text === 'SELECT 2'),
    );
  };

  it('sends the transaction with the prepare, then the execute with the reset and the set-up behind it', async () => {
    const sql = 'SELECT id FROM t WHERE id > ?';
    const chunks = await chunksOf(() => dialect.readOnlyQuery(sql, [0], LIMITS));
    expect(chunks.map((packets) => packets.map((p) => p.command))).toEqual([
      [COM_QUERY, COM_STMT_PREPARE],
      [COM_STMT_EXECUTE, COM_RESET_CONNECTION, COM_QUERY],
    ]);
    expect(chunks[0]!.map((p) => p.text)).toEqual([BEGIN, sql]);
    expect(chunks[1]![2]!.text).toMatch(/^SET SESSION .*tx_read_only = 1$/);
  });

  it('sends a named query or a table page seen before as its execute alone: one write, one round trip', async () => {
    const sql = 'SELECT id FROM t WHERE id > ?';
    await dialect.namedQuery(sql, [0], LIMITS);
    const named = await chunksOf(() => dialect.namedQuery(sql, [1], LIMITS));
    expect(named.map((packets) => packets.map((p) => p.command))).toEqual([[COM_STMT_EXECUTE]]);
    const table = (await dialect.introspect()).find((t) => t.name === 't')!;
    const page = () => dialect.rowsPage(table, undefined, { limit: 11, maxBytes: 1 << 20 });
    await page();
    const paged = await chunksOf(page);
    expect(paged.map((packets) => packets.map((p) => p.command))).toEqual([[COM_STMT_EXECUTE]]);
  });

  it('reads the grants with the transaction and the prepare, and refuses before anything is executed', async () => {
    const url = new URL(MYSQL_URL!);
    url.host = `127.0.0.1:${proxy.port}`;
    url.pathname = `/${DB}`;
    // root holds every privilege: the grant check refuses it
    const checked = mysqlDialect({
      url: url.href,
      statementTimeoutMs: 10_000,
      allowPrivilegedRole: false,
      poolMax: 1,
      logger: silentLogger,
    });
    try {
      await checked.namedQuery('SELECT 1', [], LIMITS);
      const from = proxy.chunks.length;
      const sql = 'SELECT id FROM t';
      const error = await rejection(checked.readOnlyQuery(sql, [], LIMITS));
      expect((error as Error).message).toMatch(/privilege|grant/i);
      await checked.namedQuery('SELECT 2', [], LIMITS);
      const after = proxy.chunks.slice(from);
      const chunks = after.slice(
        0,
        after.findIndex((packets) => packets[0]?.text === 'SELECT 2'),
      );
      expect(chunks[0]!.map((p) => [p.command, p.text])).toEqual([
        [COM_QUERY, 'SHOW GRANTS'],
        [COM_QUERY, BEGIN],
        [COM_STMT_PREPARE, sql],
      ]);
      expect(chunks.flat().map((p) => p.command)).not.toContain(COM_STMT_EXECUTE);
    } finally {
      await checked.close();
    }
  });

  it('never executes the statement when its transaction did not begin', async () => {
    proxy.spoilBegin = true;
    let chunks: Sent[][];
    try {
      chunks = await chunksOf(async () => {
        const error = await rejection(
          dialect.readOnlyQuery(
            'SET STATEMENT tx_read_only = 0 FOR INSERT INTO t VALUES (2)',
            [],
            LIMITS,
          ),
        );
        expect((error as Error).message).toMatch(/near 'ONLX'/);
      });
    } finally {
      proxy.spoilBegin = false;
    }
    expect(chunks.flat().map((p) => p.command)).not.toContain(COM_STMT_EXECUTE);
    const [[count]] = await admin.query<mysql.RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM \`${DB}\`.t`,
    );
    expect(count!['n']).toBe(0);
    // and the connection serves the next call in a transaction of its own
    expect((await dialect.readOnlyQuery('SELECT @@in_transaction', [], LIMITS)).rows).toEqual([
      [1],
    ]);
  });
});
