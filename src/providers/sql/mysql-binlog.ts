/**
 * Change events from a MySQL / MariaDB binary log, read by polling: `SHOW MASTER STATUS` (`SHOW
 * BINARY LOG STATUS` on MySQL 8.4, which dropped the old name) says where the log ends, and when it
 * moved, `SHOW BINLOG EVENTS IN file FROM pos` lists what was written since. A row event's
 * `Table_map` names its table (`table_id: 18 (db.table)`), so a row change wakes the watches of that
 * table only; any other statement naming the database (DDL, TRUNCATE, a write logged as a statement
 * in STATEMENT or MIXED format) is reported as "anything may have changed", and so is a stretch the
 * reader skipped (more than EVENTS_PER_READ events since the last read, a rotated or purged log file).
 *
 * Why not the replication protocol (COM_BINLOG_DUMP, a blocking stream)? mysql2 sends the command
 * but parses no Table_map or row event (they arrive as "UNKNOWN" with no body), it needs a server id
 * of its own per reader and the checksum handshake, and the npm packages that parse the stream
 * (zongji and forks) are unmaintained. Polling the log's end costs one tiny statement per interval
 * while nothing is written, and its latency is the poll interval — the same as the checksum poll it
 * replaces, without reading the watched tables.
 *
 * The user needs BINLOG MONITOR (MariaDB 10.5+) or REPLICATION CLIENT and REPLICATION SLAVE (MySQL).
 */
import type * as MysqlNs from 'mysql2';
import { SqlFailure, type ChangeLog, type LoggedChanges } from './dialect.js';
import { run } from './mysql-connect.js';

/** Most events one read lists; past it the stretch is reported as "anything may have changed". */
export const EVENTS_PER_READ = 2000;

/** Runs one statement on a pooled, prepared connection (the dialect's gate). */
export type RunOn = <T>(work: (connection: MysqlNs.PoolConnection) => Promise<T>) => Promise<T>;

interface Position {
  file: string;
  pos: number;
}

interface EventRow {
  Log_name: string;
  Pos: number | string;
  Event_type: string;
  End_log_pos: number | string;
  Info: string | null;
}

/** Access denied (1227: needs BINLOG MONITOR / REPLICATION CLIENT; 1142/1044 on older servers). */
const DENIED = new Set([1227, 1142, 1044]);
/** SHOW BINLOG EVENTS on a file the server no longer has (purged), or a position not at an event. */
const LOST_POSITION = new Set([1220, 1236]);

/**
 * The binary log of `database` from its current end on, or why it cannot be read: log_bin off, the
 * user not allowed to read it. A server that cannot be reached rejects (the caller polls instead).
 */
export async function openBinlog(
  onConnection: RunOn,
  database: string,
): Promise<ChangeLog | { unavailable: string }> {
  let at: Position | undefined;
  try {
    at = await onConnection((connection) => logEnd(connection));
    if (at === undefined) return { unavailable: 'the server keeps no binary log (log_bin is OFF)' };
    // SHOW MASTER STATUS and SHOW BINLOG EVENTS need different privileges on MySQL: try both.
    const start = at;
    await onConnection((connection) => events(connection, start, 1));
  } catch (error) {
    const errno = errnoOf(error);
    if (errno !== undefined && DENIED.has(errno))
      return {
        unavailable: `the user may not read the binary log (${(error as Error).message}); grant BINLOG MONITOR (MariaDB) or REPLICATION CLIENT and REPLICATION SLAVE (MySQL) to have change events from it`,
      };
    throw error;
  }
  let position = at;
  const mention = mentionOf(database);
  return {
    kind: 'binary log',
    read: () =>
      onConnection(async (connection): Promise<LoggedChanges> => {
        const end = await logEnd(connection);
        if (end === undefined)
          throw new SqlFailure('refused', 'the server no longer keeps a binary log');
        const from = position;
        if (end.file === from.file && end.pos === from.pos)
          return { tables: new Set(), any: false };
        // A rotated log (FLUSH LOGS, max_binlog_size, a restart): the rest of the old file is skipped.
        if (end.file !== from.file) {
          position = end;
          return { tables: new Set(), any: true };
        }
        let rows: EventRow[];
        try {
          rows = await events(connection, from, EVENTS_PER_READ);
        } catch (error) {
          const errno = errnoOf(error);
          if (errno === undefined || !LOST_POSITION.has(errno)) throw error; // read again next time
          position = end;
          return { tables: new Set(), any: true };
        }
        position = end;
        const tables = new Set<string>();
        let any = false;
        let reached = false;
        for (const row of rows) {
          if (Number(row.Pos) >= end.pos) {
            reached = true;
            break;
          }
          const info = row.Info ?? '';
          if (row.Event_type === 'Table_map') {
            const named = /\((.*)\)\s*$/s.exec(info)?.[1];
            if (named?.startsWith(`${database}.`) === true)
              tables.add(named.slice(database.length + 1));
          } else if (row.Event_type === 'Query' || row.Event_type === 'Query_compressed') {
            if (!/^\s*(BEGIN|COMMIT|ROLLBACK|XA\s)/i.test(info) && mention.test(info)) any = true;
          }
        }
        // More events than one read lists: what was not read may have touched anything.
        if (!reached && rows.length >= EVENTS_PER_READ) any = true;
        return { tables, any };
      }),
  };
}

/** Where the binary log ends now; undefined when the server keeps none. */
async function logEnd(connection: MysqlNs.PoolConnection): Promise<Position | undefined> {
  let rows: { File?: string; Position?: number | string }[];
  try {
    rows = await run(connection, 'SHOW MASTER STATUS');
  } catch (error) {
    if (errnoOf(error) !== 1064) throw error; // MySQL 8.4 knows only the new name
    rows = await run(connection, 'SHOW BINARY LOG STATUS');
  }
  const row = rows[0];
  if (row?.File === undefined || row.File === '') return undefined;
  return { file: row.File, pos: Number(row.Position) };
}

function events(
  connection: MysqlNs.PoolConnection,
  from: Position,
  limit: number,
): Promise<EventRow[]> {
  return run<EventRow[]>(
    connection,
    `SHOW BINLOG EVENTS IN ${literal(from.file)} FROM ${Math.trunc(from.pos)} LIMIT ${Math.trunc(limit)}`,
  );
}

/** A string literal in the session's lexing (backslash escapes on: mysql-connect.ts). */
function literal(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** Matches a statement that names `database` as an identifier (bare or in backticks), any case. */
function mentionOf(database: string): RegExp {
  const escaped = database.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('`', '``');
  return new RegExp(`(^|[^\\p{L}\\p{N}_$])\`?${escaped}\`?($|[^\\p{L}\\p{N}_$])`, 'iu');
}

function errnoOf(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown } | undefined)?.errno;
  if (typeof errno === 'number') return errno;
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  return cause === undefined ? undefined : errnoOf(cause);
}
