/**
 * What a pg or network error means to the SQL provider: a lost connection, a server that does not
 * accept connections, a timeout, a refusal, a missing relation, or an invalid statement.
 */
import { SqlFailure } from './dialect.js';

/** Backends ended under a statement: terminated (pg_terminate_backend, 57P01) or shut down in a crash (57P02). */
const TERMINATED_SQLSTATES: Record<string, string> = {
  '57P01': 'the server terminated the backend',
  '57P02': 'the server shut down after a crash',
};
/** Socket errors of a connection that was open: reset, closed under a write, aborted. */
const LOST_ERRNOS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ENOTCONN', 'ETIMEDOUT']);
/** What pg says when the socket ended, or when a client is used after its connection failed. */
const LOST_MESSAGES =
  /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|the connection to the database ended/i;

/**
 * Classifies a pg or network error: a lost connection (a terminated backend, a reset or broken
 * socket, pg's "Connection terminated") as unavailable, worded as such; then by SQLSTATE class.
 * An errno code (`EPIPE`, `EBUSY`: five capitals, like a SQLSTATE) is never read as one — no
 * SQLSTATE class starts with E — so a broken pipe is never an 'invalid' statement.
 */
export function classify(error: unknown): SqlFailure {
  if (error instanceof SqlFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  const errno = typeof code === 'string' && /^E[A-Z]{2,}$/.test(code) ? code : undefined;
  const sqlstate =
    errno === undefined && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
      ? code
      : undefined;
  const lost =
    (sqlstate !== undefined ? TERMINATED_SQLSTATES[sqlstate] : undefined) ??
    (errno !== undefined && LOST_ERRNOS.has(errno) ? `the socket failed: ${errno}` : undefined) ??
    (sqlstate === undefined && LOST_MESSAGES.test(message) ? message : undefined);
  if (lost !== undefined)
    return new SqlFailure(
      'unavailable',
      `the connection to the database was lost (${lost}); try again`,
      { cause: error },
    );
  if (sqlstate === '57P03')
    return new SqlFailure(
      'unavailable',
      `the database does not accept connections now (${message})`,
      { cause: error },
    );
  if (sqlstate === undefined) return new SqlFailure('unavailable', message, { cause: error });
  if (sqlstate === '57014') return new SqlFailure('timeout', message, { cause: error });
  if (sqlstate === '25006' || sqlstate === '42501' || sqlstate === '0A000')
    return new SqlFailure('refused', message, { cause: error });
  if (sqlstate === '42601' && /multiple commands/.test(message))
    return new SqlFailure('refused', message, { cause: error });
  if (sqlstate === '42P01' || sqlstate === '3F000')
    return new SqlFailure('missing', message, { cause: error });
  if (
    /^(08|53|57P|58)/.test(sqlstate) ||
    sqlstate === '3D000' ||
    sqlstate === '28000' ||
    sqlstate === '28P01'
  ) {
    return new SqlFailure('unavailable', message, { cause: error });
  }
  return new SqlFailure('invalid', message, { cause: error });
}
