/**
 * The grant check of `sql_query` on MySQL / MariaDB, the counterpart of postgres-role.ts: the
 * connected user's `SHOW GRANTS` lines are read, and any privilege beyond reading (SELECT, SHOW
 * VIEW, SHOW DATABASES, USAGE) is a refusal naming it and where it applies — ALL PRIVILEGES, any
 * write or DDL privilege, EXECUTE (a stored routine may write), FILE, PROCESS, SUPER, GRANT OPTION,
 * PROXY. A granted role is refused too: its privileges are not in the user's own lines. It runs when
 * a source with the tool starts (through `ready()`), and before each `sql_query` call.
 */

/**
 * Privileges a user that may only read holds. The binary-log ones (BINLOG MONITOR on MariaDB,
 * REPLICATION CLIENT and REPLICATION SLAVE on MySQL) let change detection read the log's events
 * (mysql-binlog.ts); they write nothing, and `sql_query` cannot use them (SHOW is not a statement
 * the guard lets through).
 */
const READ_PRIVILEGES = new Set([
  'SELECT',
  'SHOW VIEW',
  'SHOW DATABASES',
  'USAGE',
  'BINLOG MONITOR',
  'REPLICATION CLIENT',
  'REPLICATION SLAVE',
]);

/** How many refused grants a refusal names (then "and N more"). */
const NAMED = 5;

/**
 * Why `sql_query` will not run as the user whose `SHOW GRANTS` lines are `grants`, or undefined
 * when every line grants only reading.
 */
export function grantsRefusal(user: string, grants: readonly string[]): string | undefined {
  const held: string[] = [];
  for (const line of grants) {
    const grant = /^GRANT\s+(.+?)\s+ON\s+(.+?)\s+TO\s/is.exec(line);
    if (/^GRANT\s+PROXY\s+ON\s/i.test(line)) {
      held.push('PROXY');
      continue;
    }
    if (grant === null) {
      // GRANT `role` TO user: a role's privileges are not listed here
      const role = /^GRANT\s+(.+?)\s+TO\s/is.exec(line);
      if (role !== null) held.push(`the role ${role[1]!.trim()}`);
      continue;
    }
    const on = grant[2]!.trim();
    const privileges = splitPrivileges(grant[1]!);
    const extra = privileges.filter((p) => !READ_PRIVILEGES.has(p));
    if (/\bWITH\b[^`]*\bGRANT\s+OPTION\b/i.test(line.slice(grant[0].length)))
      extra.push('GRANT OPTION');
    for (const p of extra) held.push(`${p} ON ${on}`);
  }
  if (held.length === 0) return undefined;
  const more = held.length > NAMED ? ` and ${held.length - NAMED} more` : '';
  return (
    `sql_query will not run as user ${user} (it may write or act beyond reading: ${held.slice(0, NAMED).join('; ')}${more}): ` +
    'connect as a user granted only SELECT (and SHOW VIEW; see docs/providers/sql.md, "MySQL and MariaDB"), or set allowPrivilegedRole'
  );
}

/** `SELECT, INSERT (a, b), SHOW VIEW` → ['SELECT', 'INSERT', 'SHOW VIEW'] (column lists dropped). */
function splitPrivileges(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    else if (c === ',' && depth === 0) {
      out.push(current);
      current = '';
    } else if (depth === 0) current += c;
  }
  out.push(current);
  return out.map((p) => p.trim().replace(/\s+/g, ' ').toUpperCase()).filter((p) => p !== '');
}
