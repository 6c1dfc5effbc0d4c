// Pins what a `sql_query` of a statement not seen before does when its first group (BEGIN, the
// settings, the shape's LIMIT 0 run) has answered the shape and then fails before its Sync — the
// transaction's statement_timeout, which in a pipeline runs from the group's first message, firing
// under load: the transaction is aborted, so the statement is never sent into it (it would only
// answer "current transaction is aborted"); the transaction is ended and the failure itself thrown.
// The pipeline is a fake whose groups the test scripts.
import { describe, expect, it, vi } from 'vitest';
import type PgNs from 'pg';
import {
  StepFailure,
  type PipelineRun,
  type PipelineStep,
} from '../../src/providers/sql/postgres-pipeline.js';

const groups: PipelineStep[][] = [];
const runs: PipelineRun[] = [];
vi.mock('../../src/providers/sql/postgres-pipeline.js', async (importOriginal) => ({
  ...(await importOriginal<Record<string, unknown>>()),
  pipeline: (_client: unknown, steps: PipelineStep[]) => {
    groups.push(steps);
    const run = runs.shift();
    if (run === undefined) throw new Error('a group the test did not expect was sent');
    return run;
  },
}));

const { readOnlyQuery, END_AND_RESET } =
  await import('../../src/providers/sql/postgres-read-only.js');
const { ShapeCache } = await import('../../src/providers/sql/postgres-bounded-read.js');

describe('sql_query on PostgreSQL, a failure after the shape answered', () => {
  it('never sends the statement into the aborted transaction, ends it and throws the failure', async () => {
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), {
      code: '57014',
    });
    const shape = { fields: [{ name: 'n' }] as PgNs.FieldDef[], rows: [] };
    runs.push({
      answered: Promise.resolve([shape, shape, shape]),
      done: Promise.resolve(new StepFailure(2, timeout)),
    });
    const queried: string[] = [];
    const client = {
      query: async (text: string) => void queried.push(text),
    } as unknown as PgNs.ClientBase;
    const roleCheck = {
      begin: () => ({ refused: false, column: '', passed: () => undefined }),
      refusal: async () => undefined,
    };
    const spoil = vi.fn();
    const call = {
      client,
      types: {} as PgNs.CustomTypesConfig,
      shapes: new ShapeCache(),
      roleCheck: roleCheck as unknown as Parameters<typeof readOnlyQuery>[0]['roleCheck'],
      spoil,
      defer: vi.fn(),
    };
    const limits = { maxRows: 10, maxBytes: 1 << 20, timeoutMs: 500 };
    await expect(readOnlyQuery(call, 'SELECT 1 AS n', [], limits)).rejects.toBe(timeout);
    expect(groups).toHaveLength(1);
    expect(queried).toEqual([END_AND_RESET]);
    expect(spoil).not.toHaveBeenCalled();
  });
});
