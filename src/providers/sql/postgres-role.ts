/**
 * The role check of `sql_query` on PostgreSQL: which privileges the connected role holds that a
 * read-only query tool will not run with — superuser, the server-file / program / signal roles, and
 * write grants (INSERT, UPDATE, DELETE or TRUNCATE on any table or view outside the system
 * schemas). It runs inside `sql_query` transactions, judged by the server (the setup fails when it
 * refuses, so the statement written behind it never runs; the refusal's wording is read after,
 * outside the transaction), the write-grant scan kept for a while (WRITE_GRANTS_KEPT_MS); and,
 * through the provider's `ready()`, when a source with the tool starts, so a role the tool would
 * refuse is reported before any query.
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

/**
 * What the setup of a `sql_query` statement fails with when the check refuses the role: the text
 * of an integer cast that cannot succeed (SQLSTATE 22P02), evaluated only then.
 */
const REFUSED = 'reservoir: sql_query refuses role ';

/** One statement's role check, judged by the server inside the statement's transaction. */
export interface RoleCheckRun {
  /**
   * `, (SELECT …)`: a column for the transaction's setup SELECT that fails it when the role holds a
   * privilege the tool refuses (so the statement behind it never runs); empty when nothing is
   * checked.
   */
  column: string;
  /** The kept write-grant scan found write grants: refused before anything is sent. */
  refused: boolean;
  /** The setup succeeded: the check passed (a scan it ran found no write grant: kept). */
  passed(): void;
}

/** What the check needs of a connection. */
interface Queryable {
  query(sql: string): Promise<{ rows: unknown[] }>;
}

/** The role check of one provider, keeping its write-grant scan (see WRITE_GRANTS_KEPT_MS). */
export function createRoleCheck(
  allowPrivilegedRole: boolean,
  keptMs = WRITE_GRANTS_KEPT_MS,
): {
  begin(): RoleCheckRun;
  now(client: Queryable): Promise<string | undefined>;
  refusal(client: Queryable): Promise<string | undefined>;
} {
  let writes: { row: Record<string, unknown> | undefined; at: number } | undefined;
  const fresh = (): boolean => writes !== undefined && Date.now() - writes.at < keptMs;
  const now = async (client: Queryable): Promise<string | undefined> => {
    if (allowPrivilegedRole) return undefined;
    const row = (await client.query(ROLE_CHECK)).rows[0] as Record<string, unknown> | undefined;
    writes = { row, at: Date.now() };
    return roleRefusal(row);
  };
  return {
    /** The whole check now, outside any statement's transaction (readiness); its scan is kept too. */
    now,
    /**
     * Why the role is refused, read now (after the check refused it, outside the transaction):
     * its memberships with the kept scan while it is trusted, else the whole check.
     */
    async refusal(client) {
      if (allowPrivilegedRole) return undefined;
      if (!fresh()) return now(client);
      const row = (await client.query(MEMBERSHIPS)).rows[0] as Record<string, unknown> | undefined;
      return roleRefusal({ ...row, ...writes?.row });
    },
    begin() {
      if (allowPrivilegedRole) return { column: '', refused: false, passed: () => undefined };
      const scan = !fresh();
      if (!scan && Number(writes?.row?.['write_count'] ?? 0) > 0)
        return { column: '', refused: true, passed: () => undefined };
      const held = PRIVILEGES.map((p) => `m.${p}`);
      if (scan) held.push('w.write_count > 0');
      return {
        column:
          `, (SELECT CASE WHEN ${held.join(' OR ')} THEN CAST('${REFUSED}' || m.role AS int4) END ` +
          `FROM (${MEMBERSHIPS}) m${scan ? `, (${WRITE_GRANTS}) w` : ''})`,
        refused: false,
        passed() {
          // the scan found no write grant (it would have refused): that is what is kept
          if (scan) writes = { row: { write_count: 0 }, at: Date.now() };
        },
      };
    },
  };
}

/** Whether `error` is the setup's refusal (REFUSED), rather than another failure of the setup. */
export function isRoleRefusal(error: unknown): boolean {
  return (
    (error as { code?: unknown }).code === '22P02' &&
    String((error as { message?: unknown }).message).includes(REFUSED)
  );
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
