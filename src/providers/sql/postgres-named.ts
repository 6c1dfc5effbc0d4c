/**
 * Named statements of our own on pooled PostgreSQL connections. `pg` parses a named statement once
 * per connection and afterwards only binds and executes it, so the server does not parse and
 * analyse it again (it still plans each call: a custom plan): a table page (a ~1 kB statement, its
 * sizing wrapper included) costs the database ~100 µs less a call that way. Each one the server
 * keeps costs it ~200 kB (the statement, its tree, a generic plan built to compare). The name is
 * the statement's digest, so one text always has one name; a connection holds at most MAX_NAMED
 * of them, past which a statement runs unnamed, as before.
 *
 * What must stay true is `pg`'s record of what the connection has parsed (its `parsedStatements`):
 * a name it believes parsed is sent without its Parse. A `sql_query` call ends with DEALLOCATE ALL
 * (postgres-read-only.ts), which drops every statement of the connection: `forgetNamed` is called
 * as that reset is sent, and a connection whose reset fails is discarded with whatever it held.
 */
import { createHash } from 'node:crypto';
import type PgNs from 'pg';

/** Most named statements one connection keeps (a plan each, in the server's memory). */
export const MAX_NAMED = 64;

/** `pg`'s per-connection record of named statements (lib/connection.js). */
interface ParsedRecord {
  parsedStatements?: Record<string, string>;
  submittedNamedStatements?: Record<string, string>;
}

const held = new WeakMap<PgNs.ClientBase, Set<string>>();
/** Statement text → name, for the texts seen lately (a page's text repeats call after call). */
const names = new Map<string, string>();
const MAX_REMEMBERED = 1_024;

function nameOf(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `reservoir_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    if (names.size >= MAX_REMEMBERED) names.clear();
    names.set(text, name);
  }
  return name;
}

/** The name to run `text` under on `client`, or undefined (unnamed) once it holds MAX_NAMED. */
function statementName(client: PgNs.ClientBase, text: string): string | undefined {
  const name = nameOf(text);
  let mine = held.get(client);
  if (mine === undefined) held.set(client, (mine = new Set()));
  if (mine.has(name)) return name;
  if (mine.size >= MAX_NAMED) return undefined;
  mine.add(name);
  return name;
}

/**
 * Whether the server answered `error` (a SQLSTATE) on a connection still usable for one more
 * statement: not a cancel, timeout or shutdown (class 57) nor a connection failure (class 08).
 */
function answeredByServer(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(57|08)/.test(code);
}

/**
 * Runs `config` on `client` under its statement's name. A failure discards the connection (`spoil`)
 * with every statement it holds. A named statement keeps what its first Parse settled — its result
 * types, its parameters' types — so a table changed since can fail it where the same text unnamed
 * would run (0A000 a retyped result, 42883 or 22003 a retyped key): any failure the server answered,
 * but a cancel or a timeout, runs the text again unnamed, which fails as before if it must.
 */
export async function queryNamed(
  client: PgNs.ClientBase,
  spoil: () => void,
  config: PgNs.QueryArrayConfig,
): Promise<PgNs.QueryArrayResult> {
  const name = statementName(client, config.text);
  if (name === undefined) return client.query(config);
  try {
    return await client.query({ ...config, name });
  } catch (error) {
    spoil();
    if (!answeredByServer(error)) throw error;
    return client.query(config);
  }
}

/** The connection's statements are being deallocated: neither we nor `pg` count on them again. */
export function forgetNamed(client: PgNs.ClientBase): void {
  held.delete(client);
  const record = (client as unknown as { connection?: ParsedRecord }).connection;
  if (record?.parsedStatements !== undefined) record.parsedStatements = {};
  if (record?.submittedNamedStatements !== undefined) record.submittedNamedStatements = {};
}
