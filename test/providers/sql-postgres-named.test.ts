// Named statements on a pooled PostgreSQL connection (src/providers/sql/postgres-named.ts), against a
// stand-in client that records what it is asked to run: one name per text, at most MAX_NAMED a
// connection, forgotten (ours and `pg`'s record alike) when a reset deallocates them, and a failure
// the server answered (a table changed under the parsed statement, say) run again unnamed on a
// connection then discarded — but a cancel, a timeout or a lost connection.
// Through a real server and proxy: test/providers/sql-postgres-pipeline.test.ts.
import type PgNs from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { forgetNamed, MAX_NAMED, queryNamed } from '../../src/providers/sql/postgres-named.js';

/** A client whose query records the config's name and answers, or fails as `fail` says. */
function standIn(fail: (config: PgNs.QueryConfig) => Error | undefined = () => undefined) {
  const asked: (string | undefined)[] = [];
  const connection = {
    parsedStatements: { earlier: 'SELECT 0' } as Record<string, string>,
    submittedNamedStatements: { pending: 'SELECT 0' } as Record<string, string>,
  };
  const client = {
    connection,
    query: async (config: PgNs.QueryConfig) => {
      asked.push(config.name);
      const error = fail(config);
      if (error !== undefined) throw error;
      return { rows: [[1]] };
    },
  } as unknown as PgNs.ClientBase & { connection: typeof connection };
  return { client, asked };
}

const page = (i: number): PgNs.QueryArrayConfig => ({
  text: `SELECT ${i} AS n`,
  values: [],
  rowMode: 'array',
});

describe('named statements on a PostgreSQL connection', () => {
  it('gives one text one name, on every connection alike, and another text another', async () => {
    const a = standIn();
    const b = standIn();
    const spoil = vi.fn();
    await queryNamed(a.client, spoil, page(1));
    await queryNamed(a.client, spoil, page(1));
    await queryNamed(b.client, spoil, page(1));
    await queryNamed(a.client, spoil, page(2));
    const [first, again, elsewhere, other] = [...a.asked.slice(0, 2), b.asked[0], a.asked[2]];
    expect(first).toMatch(/^reservoir_[0-9a-f]{32}$/);
    expect(again).toBe(first);
    expect(elsewhere).toBe(first);
    expect(other).toMatch(/^reservoir_[0-9a-f]{32}$/);
    expect(other).not.toBe(first);
    expect(spoil).not.toHaveBeenCalled();
  });

  it('names at most MAX_NAMED texts a connection and runs the rest unnamed; the named ones stay named', async () => {
    const { client, asked } = standIn();
    for (let i = 0; i <= MAX_NAMED; i += 1) await queryNamed(client, vi.fn(), page(i));
    expect(asked.slice(0, MAX_NAMED).every((name) => name !== undefined)).toBe(true);
    expect(asked[MAX_NAMED]).toBeUndefined();
    await queryNamed(client, vi.fn(), page(0));
    expect(asked.at(-1)).toBe(asked[0]);
  });

  it('forgets every statement of a connection a reset deallocates, in its own record and pg’s', async () => {
    const { client, asked } = standIn();
    for (let i = 0; i < MAX_NAMED; i += 1) await queryNamed(client, vi.fn(), page(i));
    forgetNamed(client);
    expect(client.connection.parsedStatements).toEqual({});
    expect(client.connection.submittedNamedStatements).toEqual({});
    // room again: a new text is named
    await queryNamed(client, vi.fn(), page(MAX_NAMED + 1));
    expect(asked.at(-1)).toMatch(/^reservoir_/);
  });

  it.each([
    ['0A000', 'cached plan must not change result type'],
    ['42883', 'operator does not exist: text > integer'],
    ['22003', 'value "5000000000" is out of range for type integer'],
    ['26000', 'prepared statement "reservoir_…" does not exist'],
    ['42P05', 'prepared statement "reservoir_…" already exists'],
  ])(
    'runs a statement the server refused as named (%s) again unnamed and discards its connection',
    async (code, message) => {
      const refused = Object.assign(new Error(message), { code });
      const { client, asked } = standIn((c) => (c.name !== undefined ? refused : undefined));
      const spoil = vi.fn();
      const result = await queryNamed(client, spoil, page(1));
      expect(result.rows).toEqual([[1]]);
      expect(asked).toEqual([expect.stringMatching(/^reservoir_/), undefined]);
      expect(spoil).toHaveBeenCalledOnce();
    },
  );

  it('passes on a failure the unnamed text meets too, after trying it once', async () => {
    const missing = Object.assign(new Error('column "gone" does not exist'), { code: '42703' });
    const { client, asked } = standIn(() => missing);
    const spoil = vi.fn();
    await expect(queryNamed(client, spoil, page(1))).rejects.toBe(missing);
    expect(asked).toEqual([expect.stringMatching(/^reservoir_/), undefined]);
    expect(spoil).toHaveBeenCalledOnce();
  });

  it.each([
    ['57014', 'canceling statement due to statement timeout'],
    ['08006', 'connection failure'],
    [undefined, 'Connection terminated unexpectedly'],
  ])(
    'never runs again a statement cancelled, timed out or cut off (%s): its connection is discarded',
    async (code, message) => {
      const failure = Object.assign(new Error(message), { code });
      const { client, asked } = standIn(() => failure);
      const spoil = vi.fn();
      await expect(queryNamed(client, spoil, page(1))).rejects.toBe(failure);
      expect(asked).toHaveLength(1);
      expect(spoil).toHaveBeenCalledOnce();
    },
  );
});
