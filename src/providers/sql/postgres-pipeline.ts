/**
 * Pipelining on a `pg` client: several statements of the extended protocol (Parse, Bind, Execute
 * each) written in one write with one Sync behind them, one round trip for all. `pg` itself writes
 * one statement and its Sync at a time; this is a custom query object (a "submittable", as pg-cursor
 * is) that the client runs like any query, handing it each answer of the group.
 *
 * What makes it safe is the protocol's rule for a group: once one statement fails the server reads
 * and discards every message until the Sync — so a statement written after a transaction's start,
 * its settings and a check never runs unless every one of those succeeded. The statements run in
 * order. The server holds a group's answers until its Sync, so a Flush follows the step that
 * answers the caller: its rows arrive as it completes, while the steps behind it still run.
 */
import { createRequire } from 'node:module';
import type PgNs from 'pg';

/** One statement of a group. */
export interface PipelineStep {
  text: string;
  values?: readonly unknown[];
  /** Its rows are read (a Describe is sent for their columns), as arrays. */
  rows?: boolean;
  /** Its messages, encoded once (`constantStep`). */
  wire?: Buffer;
}

/**
 * A statement of our own, without parameters or rows to read, its Parse, Bind and Execute encoded
 * once (as `pg` would encode them: unnamed statement and portal, no parameters, text results):
 * a step sent on every call costs a copy then, not an encoding.
 */
export function constantStep(text: string): PipelineStep {
  const sql = Buffer.from(text, 'utf8');
  // Parse: 'P', length, statement name "", the text, no parameter types
  const parse = Buffer.alloc(1 + 4 + 1 + sql.length + 1 + 2);
  parse.write('P', 0, 'latin1');
  parse.writeInt32BE(parse.length - 1, 1);
  sql.copy(parse, 6);
  // Bind: portal "", statement "", no parameter formats, no parameters, no result formats
  const bind = Buffer.from([0x42, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0]);
  // Execute: portal "", all rows
  const execute = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0]);
  return { text, wire: Buffer.concat([parse, bind, execute]) };
}

/** The protocol's Flush: the server sends what it has answered so far, without waiting for a Sync. */
const FLUSH = Buffer.from([0x48, 0, 0, 0, 4]);

/** What a completed step answered: its columns and rows (empty when its rows were not asked for). */
export interface StepResult {
  fields: PgNs.FieldDef[];
  rows: unknown[][];
}

/** The step of a group that failed, and its error (a pg error, with its SQLSTATE in `code`). */
export class StepFailure extends Error {
  constructor(
    readonly step: number,
    readonly error: Error,
  ) {
    super(error.message, { cause: error });
  }
}

export interface PipelineRun {
  /**
   * Settles when step `answerAt` (the run's option; the last by default) has completed, with the
   * results of the steps up to it; rejects with a StepFailure if one of them failed.
   */
  answered: Promise<StepResult[]>;
  /** Settles once the whole group has been answered: the failure, if any step failed. */
  done: Promise<StepFailure | undefined>;
}

/** The value mapping `pg` binds a query's parameters with (pg-cursor uses it alike). */
type PrepareValue = (value: unknown) => unknown;
let prepareValue: PrepareValue | undefined;
function driverPrepareValue(): PrepareValue {
  if (prepareValue !== undefined) return prepareValue;
  const entry = createRequire(import.meta.url).resolve('pg');
  const utils = createRequire(entry)('./utils.js') as { prepareValue?: unknown };
  if (typeof utils.prepareValue !== 'function')
    throw new Error('pg has no prepareValue; statements cannot be pipelined');
  prepareValue = utils.prepareValue as PrepareValue;
  return prepareValue;
}

/** What a submittable writes through: `pg`'s Connection (lib/connection.js). */
interface Connectionish {
  stream: { cork?: () => void; uncork?: () => void; write(bytes: Buffer): boolean };
  parse(message: { text: string }): void;
  bind(message: { values: readonly unknown[]; valueMapper: PrepareValue }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
}

/**
 * Runs `steps` on `client` as one group. `answerAt` is the step whose completion answers
 * (`answered`): the steps after it run on without holding the caller up.
 */
export function pipeline(
  client: PgNs.ClientBase,
  steps: readonly PipelineStep[],
  types: PgNs.CustomTypesConfig,
  answerAt = steps.length - 1,
): PipelineRun {
  const group = new Group(steps, types, answerAt, driverPrepareValue());
  client.query(group as unknown as PgNs.Submittable);
  return { answered: group.answered, done: group.done };
}

/** The submittable: `pg`'s client calls its `submit` and then its `handle…` methods, in order. */
class Group {
  readonly answered: Promise<StepResult[]>;
  readonly done: Promise<StepFailure | undefined>;
  /** Set by `pg`'s client when it times a query out (query_timeout): called as the group settles. */
  callback: ((error: Error | null, result?: unknown) => void) | undefined;
  private answer!: { resolve(r: StepResult[]): void; reject(f: StepFailure): void };
  private finish!: (failure: StepFailure | undefined) => void;
  private readonly results: StepResult[] = [];
  private current = 0;
  private parsers: ((value: string) => unknown)[] = [];
  private settled = false;
  /** A parameter that could not be bound: the group fails at its step once answered. */
  private unbindable: Error | undefined;

  constructor(
    private readonly steps: readonly PipelineStep[],
    private readonly types: PgNs.CustomTypesConfig,
    private readonly answerAt: number,
    private readonly prepare: PrepareValue,
  ) {
    this.answered = new Promise((resolve, reject) => (this.answer = { resolve, reject }));
    this.answered.catch(() => undefined);
    this.done = new Promise((resolve) => (this.finish = resolve));
  }

  submit(connection: Connectionish): void {
    // one write for the whole group: the messages are corked and go out together
    connection.stream.cork?.();
    try {
      for (const [i, step] of this.steps.entries()) {
        if (step.wire !== undefined) connection.stream.write(step.wire);
        else {
          connection.parse({ text: step.text });
          // a value the driver cannot bind throws before its Bind is written: the group ends there
          // (its statement only parsed, never run) and fails at that step
          connection.bind({ values: step.values ?? [], valueMapper: this.prepare });
          if (step.rows === true) connection.describe({ type: 'P', name: '' });
          connection.execute({ portal: '', rows: 0 });
        }
        // the server holds its answers until the Sync; a Flush behind the answering step sends
        // them as it completes, while the steps after it still run
        if (i === this.answerAt && i < this.steps.length - 1) connection.stream.write(FLUSH);
      }
    } catch (error) {
      this.unbindable = error as Error;
    } finally {
      connection.sync();
      connection.stream.uncork?.();
    }
  }

  handleRowDescription(message: { fields: PgNs.FieldDef[] }): void {
    const result = this.result();
    result.fields = message.fields;
    this.parsers = message.fields.map(
      (f) =>
        this.types.getTypeParser(f.dataTypeID, f.format === 'binary' ? 'binary' : 'text') as (
          value: string,
        ) => unknown,
    );
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    if (this.steps[this.current]?.rows !== true) return;
    const row = message.fields.map((value, i) => (value === null ? null : this.parsers[i]!(value)));
    this.result().rows.push(row);
  }

  handleCommandComplete(): void {
    this.complete();
  }

  handleEmptyQuery(): void {
    this.complete();
  }

  handlePortalSuspended(): void {
    // every Execute asks for all rows (0): a portal is never suspended
  }

  handleCopyInResponse(connection: { sendCopyFail(message: string): void }): void {
    connection.sendCopyFail('COPY is not supported here');
  }

  handleCopyData(): void {}

  /** The server failed step `current` (the rest of the group was skipped), or the connection failed. */
  handleError(error: Error): void {
    this.settle(new StepFailure(Math.min(this.current, this.steps.length - 1), error));
  }

  handleReadyForQuery(): void {
    if (this.unbindable !== undefined) this.settle(new StepFailure(this.current, this.unbindable));
    else if (this.current < this.steps.length)
      this.settle(new StepFailure(this.current, new Error('the server skipped a statement')));
    else this.settle(undefined);
  }

  private result(): StepResult {
    return (this.results[this.current] ??= { fields: [], rows: [] });
  }

  private complete(): void {
    this.result();
    if (this.current === this.answerAt) this.answer.resolve(this.results);
    this.current += 1;
  }

  private settle(failure: StepFailure | undefined): void {
    if (this.settled) return;
    this.settled = true;
    if (failure !== undefined && failure.step <= this.answerAt) this.answer.reject(failure);
    this.finish(failure);
    this.callback?.(failure?.error ?? null, this.results);
  }
}
