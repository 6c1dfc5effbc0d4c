/**
 * A `sql_query` statement on PostgreSQL, in one write and one round trip when its shape is known
 * (postgres-pipeline.ts): BEGIN READ ONLY, a SELECT that sets the transaction's statement_timeout
 * and idle_in_transaction_session_timeout and runs the role check, the user's statement through the
 * byte-bounded wrapper, then the transaction's end and the session's reset (END_AND_RESET, one
 * statement each) — one Sync for all.
 *
 * The statement runs only if everything before it succeeded: after a failure the server skips the
 * rest of the group. The role check therefore refuses in the server — its SELECT fails when the
 * role holds a privilege the tool refuses (postgres-role.ts) — and the message naming them is read
 * afterwards, in a round trip of its own. The reset runs only after the statement succeeded; a
 * failed group has been cut short before it, so then END_AND_RESET runs on its own (one round
 * trip) before the failure is answered, as it always did. The answer goes out as soon as the
 * statement's rows are in, while the reset still runs; the connection serves again only once the
 * reset answered, and is discarded if any part of it failed.
 *
 * A statement whose shape is not known yet (its column names, for the wrapper) runs in two groups:
 * the transaction's start and the shape-learning `LIMIT 0` run of it, then the statement and the
 * reset.
 */
import type PgNs from 'pg';
import { SqlFailure, type QueryLimits, type QueryOutput } from './dialect.js';
import { wrappable } from './guard.js';
import {
  boundedStatement,
  rowsWithin,
  shapeOf,
  shapeStatement,
  staleOr,
  type ShapeCache,
} from './postgres-bounded-read.js';
import {
  constantStep,
  pipeline,
  type PipelineStep,
  type StepFailure,
  type StepResult,
} from './postgres-pipeline.js';
import { forgetNamed } from './postgres-named.js';
import { isRoleRefusal, type createRoleCheck } from './postgres-role.js';

/**
 * The end of a `sql_query` transaction: ROLLBACK, then what DISCARD ALL does, statement by statement
 * as PostgreSQL documents it — DISCARD ALL itself refuses to run in a transaction block, which a
 * group of statements (or a multi-statement string) is. What the transaction rolled back (settings
 * made with set_config, large objects, notifications) is gone with the ROLLBACK; what outlives one
 * (session advisory locks, a role set, cursors, prepared statements, LISTEN, temporary tables,
 * plans) goes with the rest, settings back to the connection's start-up values (read-only, its
 * timeout). Sent as one string (one round trip) when it runs alone.
 */
export const END_AND_RESET =
  'ROLLBACK; CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; DEALLOCATE ALL; UNLISTEN *; ' +
  'SELECT pg_catalog.pg_advisory_unlock_all(); DISCARD PLANS; DISCARD TEMP; DISCARD SEQUENCES';
/** END_AND_RESET as steps of a group, behind the statement. */
const RESET_STEPS: readonly PipelineStep[] = END_AND_RESET.split('; ').map(constantStep);
const BEGIN = constantStep('BEGIN TRANSACTION READ ONLY');

/** What one `sql_query` call runs with: its pooled connection and the provider's caches. */
export interface ReadOnlyCall {
  client: PgNs.ClientBase;
  types: PgNs.CustomTypesConfig;
  shapes: ShapeCache;
  roleCheck: ReturnType<typeof createRoleCheck>;
  /** Makes the connection be discarded instead of returned. */
  spoil: () => void;
  /** Answers at once and runs `reset` before the connection serves again (pooled.ts). */
  defer: (reset: () => Promise<void>) => void;
}

export async function readOnlyQuery(
  call: ReadOnlyCall,
  sql: string,
  params: unknown[],
  limits: QueryLimits,
): Promise<QueryOutput> {
  const { client, types, shapes, roleCheck } = call;
  const wrap = wrappable(sql, 'postgres');
  if ('reason' in wrap) throw new SqlFailure('refused', wrap.reason);
  const inner = wrap.body;
  const check = roleCheck.begin();
  if (check.refused) throw refusedAs(await roleCheck.refusal(client));
  const ms = Math.max(1, Math.floor(limits.timeoutMs));
  // the transaction's start: BEGIN, then its settings and the role check (step SETUP)
  const begin: PipelineStep[] = [
    BEGIN,
    {
      text:
        `SELECT pg_catalog.set_config('statement_timeout', '${ms}', true), ` +
        `pg_catalog.set_config('idle_in_transaction_session_timeout', '${ms * 2}', true)${check.column}`,
    },
  ];
  const SETUP = 1;

  /**
   * Runs `group` (the transaction's start first when `started`) until its step `at` answered. On a
   * failure the transaction is ended, then the failure thrown as it always was: a refusal worded,
   * a stale shape (`kept`) as such.
   */
  const answer = async (
    group: PipelineStep[],
    at: number,
    started: boolean,
    kept: boolean,
  ): Promise<{ done: Promise<StepFailure | undefined>; results: StepResult[] }> => {
    const run = pipeline(client, group, types, at);
    try {
      const results = await run.answered;
      if (started) check.passed();
      return { done: run.done, results };
    } catch (error) {
      const failure = error as StepFailure;
      if (started && failure.step > SETUP) check.passed();
      // the group stopped at the failure, before any reset: the transaction ends on its own
      await endAndReset(call);
      if (started && failure.step === SETUP && isRoleRefusal(failure.error))
        throw refusedAs(await roleCheck.refusal(client));
      throw failure.step === at ? staleOr(failure.error, kept, shapes, inner) : failure.error;
    }
  };

  let shape = shapes.get(inner);
  const kept = shape !== undefined;
  let started = false;
  if (shape === undefined) {
    // the shape first, in the transaction (the LIMIT 0 run is the statement too: after the check)
    const learn = { text: shapeStatement(inner), values: params, rows: true };
    const { results, done } = await answer([...begin, learn], begin.length, true, false);
    // The group's Sync is answered at once; an error between the shape and it (the transaction's
    // statement_timeout, which in a pipeline runs from the group's first message, firing under load)
    // has aborted the transaction: the statement is not sent into it.
    const late = await done;
    if (late !== undefined) {
      await endAndReset(call);
      throw late.error;
    }
    shape = shapeOf(results[begin.length]!.fields);
    shapes.set(inner, shape);
    started = true;
  }
  const prefix = started ? [] : begin;
  const statement = { text: boundedStatement(inner, shape, limits), values: params, rows: true };
  const at = prefix.length;
  forgetNamed(client); // the group ends with DEALLOCATE ALL
  const { done, results } = await answer(
    [...prefix, statement, ...RESET_STEPS],
    at,
    !started,
    kept,
  );
  call.defer(async () => {
    const failure = await done;
    if (failure !== undefined) throw failure.error;
  });
  return rowsWithin(results[at]!.rows, shape.columns, limits);
}

/** END_AND_RESET on its own (one round trip); a connection it fails on is discarded. */
async function endAndReset(call: ReadOnlyCall): Promise<void> {
  forgetNamed(call.client); // DEALLOCATE ALL
  await call.client.query(END_AND_RESET).catch(call.spoil);
}

function refusedAs(message: string | undefined): SqlFailure {
  return new SqlFailure(
    'refused',
    message ??
      'sql_query will not run: the role check refused the connected role, whose privileges changed during the call; try again',
  );
}
