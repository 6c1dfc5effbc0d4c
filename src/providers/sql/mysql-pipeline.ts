/**
 * Pipelining on a `mysql2` connection: several commands written at once, their answers read back
 * strictly in the order they were sent (the server runs a connection's commands one after another
 * and answers each in turn), one round trip for all. `mysql2` itself waits for each answer before
 * writing the next command; this runs its own command objects inside one queued command that
 * writes them all, then hands every arriving packet to the command whose answer it is.
 *
 * What may be pipelined is the caller's choice and a security one: a command is sent before the
 * answer to the one before it is known, so it must be harmless should that one fail — the dialect
 * pipelines a session reset with its set-up (a failed reset discards the connection whatever the
 * set-up did) and the start of a read-only transaction with the preparing of the statement it will
 * run (preparing runs nothing; the statement is executed only once the transaction answered).
 * Every command's answer is read even after one fails, so the connection stays in step; a deadline
 * that passes closes the connection.
 */
import { createRequire } from 'node:module';
import type * as MysqlNs from 'mysql2';
import { SqlFailure } from './dialect.js';

/** A `mysql2` command object (lib/commands): what a connection's queue runs. */
interface DriverCommand {
  execute(packet: unknown, connection: unknown): boolean;
  onResult?: ((error: Error | null, ...rest: unknown[]) => void) | undefined;
}

interface DriverCommands {
  Query: new (
    options: { sql: string },
    callback: (error: Error | null, rows?: unknown) => void,
  ) => DriverCommand;
  Prepare: new (
    options: { sql: string; rowsAsArray?: boolean },
    callback: (error: Error | null, statement?: unknown) => void,
  ) => DriverCommand;
  Execute: new (
    options: { statement: unknown; sql: string; values: unknown[]; rowsAsArray: boolean },
    callback: undefined,
  ) => DriverCommand & NodeJS.EventEmitter;
  ResetConnection: new (callback: (error: Error | null) => void) => DriverCommand;
}

let commands: DriverCommands | undefined;
/** `mysql2`'s command classes (not among its exports: read from its own files, beside its entry). */
function driverCommands(): DriverCommands {
  if (commands !== undefined) return commands;
  const entry = createRequire(import.meta.url).resolve('mysql2');
  commands = createRequire(entry)('./lib/commands/index.js') as DriverCommands;
  for (const name of ['Query', 'Prepare', 'ResetConnection', 'Execute'] as const)
    if (typeof commands[name] !== 'function')
      throw new Error(`mysql2 has no ${name} command; pipelining cannot be used`);
  return commands;
}

interface Connectionish {
  sequenceId: number;
  addCommand(command: DriverCommand): unknown;
  destroy(): void;
  stream?: NodeJS.EventEmitter;
  /** Writes to the socket (the driver's own method, on its prototype). */
  write(buffer: Buffer): void;
}

export interface PipelineOptions {
  /**
   * The step whose answer the deadline starts counting from (earlier steps' time is their
   * caller's to bound: a statement streaming its rows).
   * @default 0
   */
  timedFrom?: number;
  /** Aborted when the caller discards the connection: the pipeline stops waiting (rejects). */
  abandoned?: AbortSignal;
}

/** One step of a pipeline: a command built with the callback that receives its outcome. */
export type Step = (commands: DriverCommands, done: (error: Error | null) => void) => DriverCommand;

export const resetStep: Step = (c, done) => new c.ResetConnection(done);
/** Runs `sql` as text (our own statements only, never a user's); `answered` receives its rows. */
export const queryStep =
  (sql: string, answered?: (rows: unknown) => void): Step =>
  (c, done) =>
    new c.Query({ sql }, (error, rows) => {
      if (error === null) answered?.(rows);
      done(error);
    });
/**
 * Prepares `sql` as the driver's execute(`{ sql, rowsAsArray }`) will look it up in its cache;
 * `prepared` receives the driver's statement.
 */
export const prepareStep =
  (sql: string, rowsAsArray: boolean, prepared: (statement: unknown) => void): Step =>
  (c, done) =>
    new c.Prepare({ sql, rowsAsArray }, (error, statement) => {
      if (error === null) prepared(statement);
      done(error);
    });
/**
 * Executes a statement prepareStep prepared, with `values`, its rows as arrays; `listen` is given
 * the command (an emitter of the driver's 'fields', 'result', 'error' and 'end' events) before it
 * is written. Its failure is the listener's to hear: its outcome here is null.
 */
export const executeStep =
  (
    statement: unknown,
    sql: string,
    values: unknown[],
    listen: (query: NodeJS.EventEmitter) => void,
  ): Step =>
  (c) => {
    const command = new c.Execute({ statement, sql, values, rowsAsArray: true }, undefined);
    listen(command);
    return command;
  };

/**
 * Writes `steps` on `connection` at once and resolves with each one's error (null when it
 * succeeded), in order, once every answer has arrived; the connection is then free for the next
 * command. Past `timeoutMs` the connection is destroyed and the promise rejects (unavailable).
 */
export function pipeline(
  connection: MysqlNs.Connection | MysqlNs.PoolConnection,
  steps: readonly Step[],
  timeoutMs: number,
  options: PipelineOptions = {},
): Promise<(Error | null)[]> {
  const { timedFrom = 0, abandoned } = options;
  const c = driverCommands();
  const conn = connection as unknown as Connectionish;
  return new Promise((resolve, reject) => {
    const outcomes: (Error | null)[] = steps.map(() => null);
    let settled = false;
    const settle = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      conn.stream?.off('close', closed);
      abandoned?.removeEventListener('abort', leave);
      if (error === undefined) resolve(outcomes);
      else reject(error);
    };
    let deadline: NodeJS.Timeout | undefined;
    const arm = (): void => {
      deadline = setTimeout(() => {
        connection.destroy();
        settle(
          new SqlFailure(
            'unavailable',
            `the database did not answer within ${timeoutMs} ms; its connection was closed`,
          ),
        );
      }, timeoutMs);
    };
    // a connection destroyed (spoiled, killed) tells its running command nothing: its socket does,
    // unless paused; a caller that discards the connection says so
    const closed = (): void => settle(new Error('the connection to the database ended'));
    const leave = (): void => settle(new Error('the connection was discarded'));
    conn.stream?.once('close', closed);
    abandoned?.addEventListener('abort', leave, { once: true });
    const subs = steps.map((step, i) =>
      step(c, (error) => {
        outcomes[i] = error;
      }),
    );
    /** Per command, the sequence id its answer starts at (how many packets it wrote), or -1: no answer due. */
    const expect: number[] = [];
    let current = 0;
    const next = (): boolean => {
      while (current < subs.length && expect[current] === -1) current += 1;
      if (current >= timedFrom && deadline === undefined && !settled) arm();
      if (current === subs.length) {
        // the callbacks of the commands run on the next tick (the driver's own); after them, settle
        process.nextTick(() => process.nextTick(() => settle()));
        return true;
      }
      conn.sequenceId = expect[current]!;
      return false;
    };
    const composite: DriverCommand = {
      execute(packet, driverConnection) {
        if (packet === undefined || packet === null) {
          if (expect.length > 0) return false;
          // one write for all (a system call each is most of what a command costs): the packets
          // are gathered, then written as one buffer
          const packets: Buffer[] = [];
          conn.write = (buffer) => void packets.push(buffer);
          try {
            for (const sub of subs) {
              // each command starts its own packet sequence at 0, as a command alone would
              const finished = sub.execute(undefined, driverConnection);
              expect.push(finished ? -1 : conn.sequenceId);
            }
          } finally {
            delete (conn as { write?: unknown }).write;
          }
          if (packets.length > 0) conn.write(Buffer.concat(packets));
          return next();
        }
        const finished = subs[current]!.execute(packet, driverConnection);
        if (!finished) return false;
        current += 1;
        return next();
      },
      // the connection failed (lost, closed): every command still waiting is told, then the caller
      onResult: (error) => {
        for (let i = current; i < subs.length; i += 1) outcomes[i] ??= error;
        settle(error ?? new Error('the connection to the database ended'));
      },
    };
    conn.addCommand(composite);
  });
}

/** Runs `steps` as `pipeline` does, and rejects with the first step's failure, if any. */
export async function pipelineAll(
  connection: MysqlNs.Connection | MysqlNs.PoolConnection,
  steps: readonly Step[],
  timeoutMs: number,
  options: PipelineOptions = {},
): Promise<void> {
  const failed = (await pipeline(connection, steps, timeoutMs, options)).find((e) => e !== null);
  if (failed) throw failed;
}
