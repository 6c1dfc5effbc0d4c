/**
 * A Node process that runs SQLite statements for this one, so that a statement of unknown cost can be
 * stopped by killing the process (better-sqlite3 runs statements synchronously, with no interrupt).
 * Used by the SQLite source's query process and by the search index's readers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { sqliteDriverPath } from './sqlite-driver.js';

export interface SqliteProcess {
  child: ChildProcess;
  /** The last 2,000 characters the process wrote to stderr (why it failed to start, say). */
  stderr(): string;
}

/**
 * Starts `program` (CommonJS, run by `node -e`) with the path of this runtime's better-sqlite3
 * (sqlite-driver.ts) as `process.argv[1]` and `file` as `process.argv[2]`, talking over an IPC
 * channel with structured-clone serialisation.
 * The process does not keep this one alive.
 */
export function spawnSqliteProcess(program: string, file: string): SqliteProcess {
  const driver = sqliteDriverPath();
  const child = spawn(process.execPath, ['-e', program, driver, file], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'advanced',
  });
  let stderr = '';
  child.stderr?.on(
    'data',
    (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)),
  );
  child.unref();
  child.channel?.unref();
  return { child, stderr: () => stderr };
}
