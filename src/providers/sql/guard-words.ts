/**
 * What the lexical guard (guard.ts) refuses in a `sql_query` statement outside literals: words that
 * write, change the session or reach outside the database, and functions with side effects — for
 * every database, and beside them MySQL / MariaDB's own.
 */

/** Words that, outside literals, make a statement something other than a plain read. */
export const REFUSED_WORDS = new Set([
  // writes inside one statement: data-modifying CTEs, SELECT INTO, INSERT OR REPLACE INTO
  'insert',
  'update',
  'delete',
  'merge',
  'upsert',
  'into',
  // statement keywords that have no place in a read (cheap to refuse; rare as bare column names)
  'create',
  'alter',
  'drop',
  'truncate',
  'grant',
  'revoke',
  'copy',
  'call',
  'do',
  'execute',
  'prepare',
  'deallocate',
  'listen',
  'unlisten',
  'notify',
  'vacuum',
  'reindex',
  'cluster',
  'refresh',
  'discard',
  'commit',
  'rollback',
  'savepoint',
  'checkpoint',
  'attach',
  'detach',
  'pragma',
]);

/** MySQL / MariaDB words refused beside those: file and lock clauses (INTO OUTFILE is caught by INTO). */
export const MYSQL_REFUSED_WORDS = new Set([
  'load',
  'handler',
  'lock',
  'outfile',
  'dumpfile',
  'kill',
  'flush',
  'rename',
  'xa',
]);

/** MySQL / MariaDB functions that wait, take locks, read server files or move sequences. */
export const MYSQL_REFUSED_FUNCTIONS = new Set([
  'sleep',
  'benchmark',
  'get_lock',
  'release_lock',
  'release_all_locks',
  'load_file',
  'master_pos_wait',
  'source_pos_wait',
  'master_gtid_wait',
  'wait_for_executed_gtid_set',
  'wait_until_sql_thread_after_gtids',
  'nextval',
  'setval',
  'lastval',
  'sys_exec',
  'sys_eval',
  'last_insert_id',
]);

/** Function names (exact) with side effects or reach outside the database. */
export const REFUSED_FUNCTIONS = new Set([
  'set_config',
  'nextval',
  'setval',
  'txid_current',
  'pg_current_xact_id',
  'pg_notify',
  'load_extension',
  'readfile',
  'writefile',
  'edit',
  'fts3_tokenizer',
  'query_to_xml',
  'query_to_xml_and_xmlschema',
  'query_to_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'table_to_xml',
  'table_to_xml_and_xmlschema',
  'schema_to_xml',
  'schema_to_xml_and_xmlschema',
  'database_to_xml',
  'database_to_xml_and_xmlschema',
  'lowrite',
  'loread',
]);

/** Function name prefixes refused the same way. */
export const REFUSED_PREFIXES = [
  'pg_sleep',
  'pg_terminate',
  'pg_cancel',
  'pg_signal',
  'pg_reload',
  'pg_rotate',
  'pg_promote',
  'pg_switch',
  'pg_create',
  'pg_drop',
  'pg_backup',
  'pg_start_backup',
  'pg_stop_backup',
  'pg_read',
  'pg_ls_',
  'pg_stat_file',
  'pg_file',
  'pg_logical',
  'pg_replication',
  'pg_advisory',
  'pg_try_advisory',
  'pg_stat_reset',
  'pg_import',
  'pg_log_',
  'pg_wal_replay',
  'pg_copy',
  'lo_',
  'dblink',
];
