/**
 * What a SQLite error says of the index file: broken (rebuild it) or not writable (the index lacks
 * what the write held), as opposed to a passing failure. The codes survive the writer thread
 * (store-worker.ts) intact.
 */
/** Whether an error means the file is not a usable index (rebuild it) rather than a passing failure. */
export function isBrokenIndex(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB|FORMAT|SCHEMA)/.test(code);
}

/**
 * Whether an error means the index file could not be written — the disk is full (SQLITE_FULL), an
 * I/O error, a read-only file or directory: the index then lacks what the write held (partial).
 */
export function isWriteFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|PERM)/.test(code);
}
