// What the SQL provider keeps per statement text to save CPU per call gives the answers it would
// give afresh: the lexical guard's verdicts are kept by dialect and text, and the result cap's fit
// of `sql_query` rows measures the whole answer once, cutting exactly where row-by-row would; a
// table page's row already as JSON has it is sent as it is, any other converted.
import { describe, expect, it } from 'vitest';
import { checkStatement, wrappable } from '../../src/providers/sql/guard.js';
import { fitRows, jsonRows, jsonValueRows } from '../../src/providers/sql/views.js';

describe('kept guard verdicts', () => {
  it('keeps verdicts apart by dialect: the same text lexes differently on each', () => {
    // `#` starts a comment on MySQL only: there the `;` is commented out, on PostgreSQL it splits.
    const sql = 'SELECT 1 # ; DROP TABLE t';
    for (let i = 0; i < 2; i += 1) {
      expect(checkStatement(sql, 'mysql').ok).toBe(true);
      expect(checkStatement(sql, 'postgres').ok).toBe(false);
      expect('body' in wrappable(sql, 'mysql')).toBe(true);
      expect('reason' in wrappable(sql, 'postgres')).toBe(true);
    }
  });

  it('judges a statement longer than what is kept afresh, the same way', () => {
    const long = `SELECT ${'1 + '.repeat(3000)}1`;
    expect(checkStatement(long, 'postgres')).toEqual({ ok: true });
    expect(checkStatement(`${long}; DELETE FROM t`, 'postgres').ok).toBe(false);
  });
});

describe('fitRows', () => {
  const rows = [
    [1, 'a'],
    [2, 'bé'],
    [3, null],
  ];
  /** Row by row: the array's brackets, then each row's JSON and its separator. */
  const rowByRow = (budget: number): number => {
    let used = 2;
    for (let i = 0; i < rows.length; i += 1) {
      used += Buffer.byteLength(JSON.stringify(rows[i])) + 1;
      if (used > budget) return i;
    }
    return rows.length;
  };

  it('keeps exactly the rows that fit, for every budget around the whole answer', () => {
    const whole = Buffer.byteLength(JSON.stringify(rows));
    for (let budget = 0; budget <= whole + 3; budget += 1) {
      const fitted = fitRows(rows, budget);
      expect(fitted.rows.length, `budget ${budget}`).toBe(rowByRow(budget));
      expect(fitted.dropped).toBe(rowByRow(budget) < rows.length);
    }
    expect(fitRows([], 0)).toEqual({ rows: [], dropped: false });
  });
});

describe('jsonRows', () => {
  it('sends a row already as JSON has it as it is, and converts any other', () => {
    const plain = { id: 1, name: 'a', doc: { k: [1] }, none: null, yes: true };
    const [kept] = jsonRows([plain]);
    expect(kept).toBe(plain);
    const odd = [
      { at: new Date('2024-01-01T00:00:00Z') },
      { big: 2n ** 70n },
      { bytes: new Uint8Array([1, 2]) },
      { missing: undefined },
      { inf: Infinity },
      { id: 1, __reservoir_rowid: 7 },
    ];
    expect(jsonRows(odd)).toEqual([
      { at: '2024-01-01T00:00:00.000Z' },
      { big: '1180591620717411303424' },
      { bytes: { $base64: 'AQI=' } },
      { missing: null },
      { inf: 'Infinity' },
      { id: 1 },
    ]);
  });
});

describe('jsonValueRows', () => {
  it('converts the values JSON cannot carry where they stand and leaves the rest', () => {
    const doc = { k: 1 };
    const rows: unknown[][] = [
      [1, 'a', doc, null],
      [2n ** 70n, new Uint8Array([1, 2]), undefined, -Infinity],
    ];
    const first = rows[0];
    expect(jsonValueRows(rows)).toEqual([
      [1, 'a', { k: 1 }, null],
      ['1180591620717411303424', { $base64: 'AQI=' }, null, '-Infinity'],
    ]);
    expect(rows[0]).toBe(first);
    expect(rows[0]![2]).toBe(doc);
  });
});
