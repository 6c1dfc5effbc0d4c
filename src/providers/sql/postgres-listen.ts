/**
 * The dedicated PostgreSQL connection a source LISTENs on for change notifications, made again
 * with backoff when it drops.
 */
import type PgNs from 'pg';
import { quoteIdent } from './dialect.js';

type Pg = typeof PgNs;

const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5000;

/**
 * LISTENs on `channel` over a connection of its own, calling `onNotify(payload)` per notification;
 * a dropped connection is reported to `onError` and made again (250 ms doubling to 5 s). Resolves
 * with the stop function once listening; rejects when the first connection fails.
 */
export async function listenOn(
  pg: Pg,
  config: PgNs.ClientConfig,
  channel: string,
  onNotify: (payload: string) => void,
  onError: (error: unknown) => void,
): Promise<() => Promise<void>> {
  let client: PgNs.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = BACKOFF_MIN_MS;
  const connect = async (): Promise<void> => {
    const c = new pg.Client(config);
    client = c;
    c.on('notification', (n) => onNotify(n.payload ?? ''));
    c.on('error', (error) => {
      onError(error);
      void c.end().catch(() => undefined);
      schedule();
    });
    await c.connect();
    await c.query(`LISTEN ${quoteIdent(channel)}`);
    delay = BACKOFF_MIN_MS;
  };
  const schedule = (): void => {
    if (stopped || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((error: unknown) => {
        onError(error);
        delay = Math.min(BACKOFF_MAX_MS, delay * 2);
        schedule();
      });
    }, delay);
  };
  try {
    await connect();
  } catch (error) {
    await client?.end().catch(() => undefined);
    throw error;
  }
  return async () => {
    stopped = true;
    if (retry !== undefined) clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
