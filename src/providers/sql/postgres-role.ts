/**
 * The role check of `sql_query` on PostgreSQL: which privileges the connected role holds that a
 * read-only query tool will not run with — superuser, the server-file / program / signal roles, and
 * write grants (INSERT, UPDATE, DELETE or TRUNCATE on any table or view outside the system
 * schemas). It runs inside `sql_query` transactions (the write-grant scan kept for a while, see
 * WRITE_GRANTS_KEPT_MS) and, through the provider's `ready()`, when a source with the tool starts,
 * so a role the tool would refuse is reported before any query.
 */

/** How many writable tables a refusal names (then "and N more"). */
const NAMED_TABLES = 5;

/** The role and its privileged memberships: cheap lookups, judged in every `sql_query` transaction. */
const MEMBERSHIPS = `SELECT current_user AS role, r.rolsuper AS superuser,
  pg_catalog.pg_has_role(current_user, 'pg_read_server_files', 'USAGE') AS read_files,
  pg_catalog.pg_has_role(current_user, 'pg_write_server_files', 'USAGE') AS write_files,
  pg_catalog.pg_has_role(current_user, 'pg_execute_server_program', 'USAGE') AS programs,
  pg_catalog.pg_has_role(current_user, 'pg_signal_backend', 'USAGE') AS signal
FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`;

/** The writable tables (up to NAMED_TABLES) and their count: a scan of every relation's privileges. */
const WRITE_GRANTS = `SELECT (pg_catalog.array_agg(t.name ORDER BY t.name))[1:${NAMED_TABLES}] AS write_tables, count(*)::int AS write_count FROM (
  SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) AS name
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
    AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
    AND pg_catalog.has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
) t`;

/** The whole check in one row (the readiness check at start). */
export const ROLE_CHECK = `SELECT m.*, w.* FROM (${MEMBERSHIPS}) m, (${WRITE_GRANTS}) w`;

/**
 * How long one write-grant scan is trusted, ms. The scan reads every relation's privileges (tens of
 * ms on a catalog of thousands of tables, measured at 25-60 ms for 5,000), and a write grant cannot
 * be used in the READ ONLY transaction a statement runs in, so its answer is kept by the provider —
 * a rebuilt source (a reload that changes it, a restart) scans again at once — and renewed after
 * this long. Superuser and the privileged memberships, which a read-only transaction does not
 * contain, are judged in every transaction.
 */
export const WRITE_GRANTS_KEPT_MS = 60_000;

/** One transaction's role check: SQL to append to its setup, and the refusal read from the setup's results. */
export interface RoleCheckRun {
  /** `; …` statements to append (empty when nothing is checked). */
  sql: string;
  /** Why the statement may not run, from the results of the setup (the check's are the last), or undefined. */
  refusal(results: readonly { rows: unknown[] }[]): string | undefined;
}

/** What the check needs of a connection. */
interface Queryable {
  query(sql: string): Promise<{ rows: unknown[] }>;
}

/** The role check of one provider, keeping its write-grant scan (see WRITE_GRANTS_KEPT_MS). */
export function createRoleCheck(
  allowPrivilegedRole: boolean,
  keptMs = WRITE_GRANTS_KEPT_MS,
): { begin(): RoleCheckRun; now(client: Queryable): Promise<string | undefined> } {
  let writes: { row: Record<string, unknown> | undefined; at: number } | undefined;
  return {
    /** The whole check now, outside any statement's transaction (readiness); its scan is kept too. */
    async now(client) {
      if (allowPrivilegedRole) return undefined;
      const row = (await client.query(ROLE_CHECK)).rows[0] as Record<string, unknown> | undefined;
      writes = { row, at: Date.now() };
      return roleRefusal(row);
    },
    begin() {
      if (allowPrivilegedRole) return { sql: '', refusal: () => undefined };
      const scan = writes === undefined || Date.now() - writes.at >= keptMs;
      return {
        sql: scan ? `; ${MEMBERSHIPS}; ${WRITE_GRANTS}` : `; ${MEMBERSHIPS}`,
        refusal(results) {
          const last = (from: number): Record<string, unknown> | undefined =>
            results[results.length - from]?.rows[0] as Record<string, unknown> | undefined;
          if (scan) writes = { row: last(1), at: Date.now() };
          return roleRefusal({ ...last(scan ? 2 : 1), ...writes?.row });
        },
      };
    },
  };
}

const PRIVILEGES = ['superuser', 'read_files', 'write_files', 'programs', 'signal'] as const;
const WORDED: Record<(typeof PRIVILEGES)[number], string> = {
  superuser: 'superuser',
  read_files: 'pg_read_server_files',
  write_files: 'pg_write_server_files',
  programs: 'pg_execute_server_program',
  signal: 'pg_signal_backend',
};

/**
 * Why `sql_query` will not run as the role `row` describes (a ROLE_CHECK row), or undefined when it
 * may: names the role, each privilege, the writable tables, and what to do instead.
 */
export function roleRefusal(row: Record<string, unknown> | undefined): string | undefined {
  const held: string[] = PRIVILEGES.filter((p) => row?.[p] === true).map((p) => WORDED[p]);
  const count = Number(row?.['write_count'] ?? 0);
  if (count > 0) {
    const named = Array.isArray(row?.['write_tables']) ? (row['write_tables'] as string[]) : [];
    const more = count > named.length ? ` and ${count - named.length} more` : '';
    held.push(`write grants on ${named.join(', ')}${more}`);
  }
  if (held.length === 0) return undefined;
  return (
    `sql_query will not run as role ${String(row?.['role'])} (${held.join('; ')}): ` +
    'connect as a role that may only read (GRANT SELECT only; see docs/providers/sql.md, "Safety model"), or set allowPrivilegedRole'
  );
}
