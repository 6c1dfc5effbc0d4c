/**
 * The role check of `sql_query` on PostgreSQL: which privileges the connected role holds that a
 * read-only query tool will not run with — superuser, the server-file / program / signal roles, and
 * write grants (INSERT, UPDATE, DELETE or TRUNCATE on any table or view outside the system
 * schemas). It runs inside every `sql_query` transaction and, through the provider's `ready()`, when
 * a source with the tool starts, so a role the tool would refuse is reported before any query.
 */

/** How many writable tables a refusal names (then "and N more"). */
const NAMED_TABLES = 5;

/** One row: the role, its privileged memberships, the writable tables (up to NAMED_TABLES + 1) and their count. */
export const ROLE_CHECK = `SELECT current_user AS role, r.rolsuper AS superuser,
  pg_catalog.pg_has_role(current_user, 'pg_read_server_files', 'USAGE') AS read_files,
  pg_catalog.pg_has_role(current_user, 'pg_write_server_files', 'USAGE') AS write_files,
  pg_catalog.pg_has_role(current_user, 'pg_execute_server_program', 'USAGE') AS programs,
  pg_catalog.pg_has_role(current_user, 'pg_signal_backend', 'USAGE') AS signal,
  w.tables AS write_tables, w.n AS write_count
FROM pg_catalog.pg_roles r,
  LATERAL (SELECT (pg_catalog.array_agg(t.name ORDER BY t.name))[1:${NAMED_TABLES}] AS tables, count(*)::int AS n FROM (
    SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) AS name
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
      AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
      AND pg_catalog.has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
  ) t) w
WHERE r.rolname = current_user`;

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
